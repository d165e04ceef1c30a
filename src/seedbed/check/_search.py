"""The search engine: Wing & Gong's algorithm with Lowe's memoization.

The invocations and completions sit in one doubly linked list in time order.
Scanning from the front, any invocation met before the first completion may
be linearized next (no pending operation finished before it began);
linearizing it unlinks its call and return entries. Meeting a completion
whose operation is not yet linearized means the current prefix is a dead end:
backtrack, relinking what was unlinked. Two prefixes that linearized the same
*set* of operations and reached the same model state have the same futures,
so each (set, state) pair is explored once. This is the structure Porcupine
uses, written anew for Python.

Memory grows about linearly with the history. A set of linearized
operations is kept as `(base, window)`: every operation below index `base`
is linearized and bit k of `window` says whether `base + k` is, so a key
costs the width of the window of operations in flight, not one bit per
operation of the history (a bitset per operation and per memo entry made
memory grow with the square of the history's length).

Four refinements keep the search small, each sound on its own (an order
the refinement rules out has an equally legal one it keeps):

- an operation whose outcome is unknown has no completion entry, so it is
  never forced: reaching the end with every known operation linearized is
  success;
- a read-only operation (the model says which) that is legal when tried is
  committed to: anything that could follow it later could follow it there,
  so alternatives to it are never explored;
- an unknown-outcome operation is not linearized where it changes nothing
  (`_effective`), and not at all if it is read-only;
- unknown-outcome operations that step alike (the model's ``effect``) go
  in invocation order (`_twins`).

On the 103 Jepsen etcd logs the last two cut the tries of an operation
from 2.9 million to 0.36 million: timed-out writes and compare-and-sets,
each pending to the end of the log, were tried in every state the search
met, mostly to change nothing or to reach a set the memo already held
with a twin in place of the operation.

For explanations (`_witness`) some operations are *soft*: optional within
their interval. Reaching a soft return entry skips that operation instead of
ending the path.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from seedbed.check._history import Operation
from seedbed.check._models import ILLEGAL, Model, StepFn, compile_step, is_read_only


class SearchTimeout(Exception):
    """The deadline passed before the search finished."""


class _Node:
    """An entry of the call/return list.

    A call entry has the operation's step function ``fn``; a return entry
    has None. ``pure`` marks entries that, once undone, leave no alternative
    to try at their level: legal read-only calls and skipped soft returns.
    ``twin`` is the index of the operation this one may only follow (-1:
    none): see `_twins`.
    """

    __slots__ = ("fn", "index", "match", "next", "op", "prev", "pure", "twin")

    def __init__(self, op: Operation | None, fn: Any, index: int, pure: bool = False) -> None:
        self.op = op
        self.fn = fn
        self.index = index  # the operation's position in the search (-1: a sentinel)
        self.pure = pure
        self.twin = -1
        self.match: _Node | None = None
        self.prev: _Node = self  # linked for real by _build
        self.next: _Node = self


def _build(ops: Sequence[Operation], model: Model, soft: frozenset[int]) -> _Node:
    """The time-ordered list of entries behind a head sentinel.

    Unknown-outcome operations get no return entry, and the list ends with an
    end sentinel (a return entry without operation): reaching it with every
    known operation linearized is success, the unknown ones never took effect.
    An unknown-outcome read-only operation constrains nothing and changes
    nothing, so it gets no entry at all, and an unknown-outcome operation is
    never linearized where it would change nothing (`_effective`): left out
    there, it can still go later or never. Operations whose id is in ``soft``
    are optional *within* their interval: their return entry, if reached,
    lets the search skip them (see `_witness`). A soft return entry points
    back at its call entry.
    """
    keyed: list[tuple[int, int, _Node]] = []
    calls: list[_Node] = []
    for op in ops:
        pure = is_read_only(model, op)
        if op.ret is None and pure:
            continue
        fn = compile_step(model, op)
        call = _Node(op, fn if op.known else _effective(fn), len(calls), pure)
        calls.append(call)
        keyed.append((op.call, 1, call))
        if op.ret is not None:
            ret = _Node(op, None, call.index, op.id in soft)
            call.match = ret
            if op.id in soft:
                ret.match = call
            keyed.append((op.ret, 0, ret))
    keyed.sort(key=lambda k: (k[0], k[1]))
    _twins([node for _, is_call, node in keyed if is_call], model)
    head = prev = _Node(None, None, -1)
    for _, _, node in keyed:
        prev.next = node
        node.prev = prev
        prev = node
    end = _Node(None, None, -1)
    prev.next = end
    end.prev = prev
    return head


def _effective(fn: StepFn) -> StepFn:
    """The step of an unknown-outcome operation, illegal where it changes nothing.

    Linearizing it there only marks it done: any order that does so is as
    legal without it (it may never have taken effect), and leaving it
    pending keeps it for a state where it matters. Timed-out compare-and-sets
    whose expected value is not there made most of the etcd logs' tries.
    """

    def step(state: Any) -> Any:
        new = fn(state)
        return ILLEGAL if new == state else new

    return step


def _twins(calls: list[_Node], model: Model) -> None:
    """Link unknown-outcome operations to their twins, if the model says which.

    Two operations of unknown outcome that step alike in every state (equal
    ``model.effect``) are interchangeable once both are invoked: neither has
    a completion to meet, so any legal order that uses the later one first,
    or alone, is just as legal with the two swapped, yet the memo sees two
    different sets. So the search linearizes such twins in invocation order
    only: an operation may go once its earlier twin has. The etcd logs'
    timed-out writes of the same value made more than half of the search's
    work before this. (Known operations could be paired too where their
    intervals nest in order; on the etcd logs that saved 0.1% of the work
    and cost more to set up, so they are not.)
    """
    effect_of = getattr(model, "effect", None)
    if effect_of is None:
        return
    latest: dict[Hashable, _Node] = {}
    for call in calls:  # in invocation order
        op = call.op
        if op is None or op.ret is not None:
            continue
        effect = effect_of(op)
        if effect is None:
            continue
        before = latest.get(effect)
        if before is not None:
            call.twin = before.index
        latest[effect] = call


@dataclass
class SearchResult:
    ok: bool
    order: list[Operation]
    horizon: int = 0
    """Latest event position of a return entry the search got stuck at."""


SLICE = 1024
"""Backtracks between two yields of a search: the unit of time-sharing."""

Steps = Generator[None, None, SearchResult]


def search_steps(
    ops: Sequence[Operation], model: Model, soft: frozenset[int] = frozenset()
) -> Steps:
    """The search over ``ops`` (already without failed operations), resumable.

    A generator that yields every `SLICE` backtracks and returns the result,
    so that callers can interleave parts and watch the clock between slices.
    """
    head = _build(ops, model, soft)
    state = model.init()
    base = window = 0  # the linearized set (see the module docstring)
    seen: set[tuple[int, int, Any]] = set()
    stack: list[tuple[_Node, Any, int, int]] = []
    longest: list[_Node] = []
    # The loop below runs millions of times: methods are bound to locals and
    # the list surgery of _lift/_unlift is inlined, which saves about a third.
    remember, push, pop = seen.add, stack.append, stack.pop
    budget = SLICE
    horizon = 0
    node = head.next
    while True:
        fn = node.fn
        if fn is not None:  # a call entry: try to linearize its operation now
            twin = node.twin
            if twin >= base and not (window >> (twin - base)) & 1:
                node = node.next  # its earlier twin goes first
                continue
            new = fn(state)
            if new is not ILLEGAL:
                w = window | (1 << (node.index - base))  # _with, inlined
                b = base
                if w & 1:
                    ones = (~w & (w + 1)).bit_length() - 1
                    w >>= ones
                    b += ones
                key = (b, w, new)
                if key not in seen:
                    remember(key)
                    push((node, state, base, window))
                    state = new
                    base, window = b, w
                    prev, nxt = node.prev, node.next  # lift the call entry...
                    prev.next = nxt
                    nxt.prev = prev
                    match = node.match
                    if match is not None:  # ...and its return entry
                        prev, nxt = match.prev, match.next
                        prev.next = nxt
                        nxt.prev = prev
                    node = head.next
                    continue
            node = node.next
            continue
        if node.op is None:  # the end: every known operation is linearized
            return SearchResult(True, [e[0].op for e in stack if e[0].fn is not None and e[0].op])
        match = node.match
        if match is not None:  # a soft return entry: skip its operation
            key = _with(base, window, node.index, state)
            if key not in seen:
                remember(key)
                push((node, state, base, window))  # popped like a read-only op: no alternative
                base, window = key[0], key[1]
                prev, nxt = node.prev, node.next
                prev.next = nxt
                nxt.prev = prev
                prev, nxt = match.prev, match.next
                prev.next = nxt
                nxt.prev = prev
                node = head.next
                continue
        # A return entry of a pending operation: dead end, backtrack.
        if len(stack) > len(longest):
            longest = [e[0] for e in stack]
        stuck = node.op.ret if node.op is not None else None
        if stuck is not None and stuck > horizon:
            horizon = stuck
        while True:
            if not stack:
                order = [n.op for n in longest if n.fn is not None and n.op]
                return SearchResult(False, order, horizon)
            budget -= 1
            if not budget:
                budget = SLICE
                yield
            node, state, base, window = pop()  # undo the last linearization
            match = node.match
            if match is not None:
                match.prev.next = match
                match.next.prev = match
            node.prev.next = node
            node.next.prev = node
            if not node.pure:
                break
            # A read-only operation that was legal here was as good a first
            # step as any: if nothing worked after it, nothing works here.
        node = node.next


def _with(base: int, window: int, index: int, state: Any) -> tuple[int, int, Any]:
    """The memo key after linearizing operation `index`: the window slides
    past every operation linearized from its low end."""
    window |= 1 << (index - base)
    if window & 1:
        ones = (~window & (window + 1)).bit_length() - 1
        window >>= ones
        base += ones
    return base, window, state


def search(
    ops: Sequence[Operation],
    model: Model,
    deadline: float | None,
    soft: frozenset[int] = frozenset(),
) -> SearchResult:
    """Run the search to the end; raise `SearchTimeout` once past ``deadline``."""
    steps = search_steps(ops, model, soft)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: SearchResult = done.value
            return result
        if deadline is not None and time.monotonic() > deadline:
            raise SearchTimeout
