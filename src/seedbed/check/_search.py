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

Two refinements keep it small. An operation whose outcome is unknown has no
completion entry, so it is never forced: reaching the end with every known
operation linearized is success. And a read-only operation (the model says
which) that is legal when tried is committed to: anything that could follow
it later could follow it there, so alternatives to it are never explored.

For explanations (`_witness`) some operations are *soft*: optional within
their interval. Reaching a soft return entry skips that operation instead of
ending the path.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from seedbed.check._history import Operation
from seedbed.check._models import ILLEGAL, Model, compile_step, is_read_only


class SearchTimeout(Exception):
    """The deadline passed before the search finished."""


class _Node:
    """An entry of the call/return list.

    A call entry has the operation's step function ``fn``; a return entry
    has None. ``pure`` marks entries that, once undone, leave no alternative
    to try at their level: legal read-only calls and skipped soft returns.
    """

    __slots__ = ("fn", "index", "match", "next", "op", "prev", "pure")

    def __init__(self, op: Operation | None, fn: Any, index: int, pure: bool = False) -> None:
        self.op = op
        self.fn = fn
        self.index = index  # the operation's position in `ops` (-1: a sentinel)
        self.pure = pure
        self.match: _Node | None = None
        self.prev: _Node = self  # linked for real by _build
        self.next: _Node = self


def _build(ops: Sequence[Operation], model: Model, soft: frozenset[int]) -> _Node:
    """The time-ordered list of entries behind a head sentinel.

    Unknown-outcome operations get no return entry, and the list ends with an
    end sentinel (a return entry without operation): reaching it with every
    known operation linearized is success, the unknown ones never took effect.
    Operations whose id is in ``soft`` are optional *within* their interval:
    their return entry, if reached, lets the search skip them (see
    `_witness`). A soft return entry points back at its call entry.
    """
    keyed: list[tuple[int, int, _Node]] = []
    for i, op in enumerate(ops):
        call = _Node(op, compile_step(model, op), i, is_read_only(model, op))
        keyed.append((op.call, 1, call))
        if op.ret is not None:
            ret = _Node(op, None, i, op.id in soft)
            call.match = ret
            if op.id in soft:
                ret.match = call
            keyed.append((op.ret, 0, ret))
    keyed.sort(key=lambda k: (k[0], k[1]))
    head = prev = _Node(None, None, -1)
    for _, _, node in keyed:
        prev.next = node
        node.prev = prev
        prev = node
    end = _Node(None, None, -1)
    prev.next = end
    end.prev = prev
    return head


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
