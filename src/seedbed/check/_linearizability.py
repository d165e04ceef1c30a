"""The linearizability check: can the operations be put in one legal order?

A history is linearizable when every operation can be given an instant
between its invocation and its completion such that, taken in the order of
those instants, the operations are a legal run of the sequential model.
Operations whose outcome is unknown may also be left out (they never took
effect); failed operations are left out always.

The search is Wing & Gong's, as improved by Lowe and as Porcupine runs it:
the invocations and completions sit in one doubly linked list in time order.
Scanning from the front, any invocation met before the first completion may
be linearized next (it is minimal in real-time order); linearizing it unlinks
its call and return entries. Meeting a completion whose operation is not yet
linearized means the current prefix is a dead end: backtrack. Two prefixes
that linearized the same *set* of operations and reached the same model state
have the same futures, so each (set, state) pair is explored once; the set is
an int used as a bitset. A model that can split the history (P-compositional,
e.g. per key) has each part searched on its own.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from seedbed.check._history import Event, History, Operation
from seedbed.check._models import ILLEGAL, Model, compile_step, describe_op, partition_of
from seedbed.errors import UsageError


class Outcome(StrEnum):
    """The three possible answers."""

    LINEARIZABLE = "linearizable"
    NOT_LINEARIZABLE = "not-linearizable"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    """What `linearizable` found.

    - ``outcome``: linearizable, not linearizable, or unknown (timed out).
      ``bool(verdict)`` is True only for linearizable.
    - ``order``: for a linearizable history, one legal order of the operations
      that took effect (parts concatenated); otherwise the longest legal order
      the search reached in the failing part.
    - ``witness``: for a non-linearizable history, a smallest set of
      operations that cannot be ordered: without any one of them the rest
      could be (when ``witness_minimal``; the shrinking stops at the timeout).
    - ``part``: the label of the failing part (the key, for the kv model).
    """

    outcome: Outcome
    seconds: float
    order: tuple[Operation, ...] = ()
    witness: tuple[Operation, ...] = ()
    witness_minimal: bool = False
    part: Hashable = None
    model: Model | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.outcome is Outcome.LINEARIZABLE

    def explain(self) -> str:
        """A few lines for people: the verdict and, on failure, why."""
        lines = [f"{self.outcome} ({self.seconds:.3f} s)"]
        if self.outcome is not Outcome.NOT_LINEARIZABLE:
            return "\n".join(lines)
        model = self.model
        describe = str if model is None else (lambda op: describe_op(model, op))
        if self.part is not None:
            lines.append(f"in part {self.part!r}:")
        lines.append("these operations cannot be ordered:")
        lines += [f"  p{op.process} {describe(op)}   [events {_span(op)}]" for op in self.witness]
        lines.append(f"longest legal order ({len(self.order)} operations):")
        lines += [f"  {describe(op)}" for op in self.order]
        return "\n".join(lines)


def _span(op: Operation) -> str:
    return f"{op.call}..{'end' if op.ret is None else op.ret}"


class _Timeout(Exception):
    pass


class _Node:
    """An entry of the call/return list. A return entry has ``fn`` None."""

    __slots__ = ("bit", "fn", "match", "next", "op", "prev")

    def __init__(self, op: Operation | None, fn: Any, bit: int) -> None:
        self.op = op
        self.fn = fn
        self.bit = bit
        self.match: _Node | None = None
        self.prev: _Node = self  # linked for real by _build
        self.next: _Node = self


def _build(ops: Sequence[Operation], model: Model) -> _Node:
    """The time-ordered list of entries behind a head sentinel.

    Unknown-outcome operations get no return entry, and the list ends with an
    end sentinel (a return entry without operation): reaching it with every
    known operation linearized is success, the unknown ones never took effect.
    """
    keyed: list[tuple[int, int, _Node]] = []
    for i, op in enumerate(ops):
        call = _Node(op, compile_step(model, op), 1 << i)
        keyed.append((op.call, 1, call))
        if op.ret is not None:
            ret = _Node(op, None, 1 << i)
            call.match = ret
            keyed.append((op.ret, 0, ret))
    keyed.sort(key=lambda k: (k[0], k[1]))
    head = prev = _Node(None, None, 0)
    for _, _, node in keyed:
        prev.next = node
        node.prev = prev
        prev = node
    end = _Node(None, None, 0)
    prev.next = end
    end.prev = prev
    return head


@dataclass
class _Search:
    ok: bool
    order: list[Operation]


SLICE = 1024
"""Backtracks between two yields of a search: the unit of time-sharing."""

Steps = Generator[None, None, _Search]


def search_steps(ops: Sequence[Operation], model: Model) -> Steps:
    """The search over ``ops`` (already without failed operations), resumable.

    A generator that yields every `SLICE` backtracks and returns the result,
    so that callers can interleave parts and watch the clock between slices.
    """
    head = _build(ops, model)
    state = model.init()
    bits = 0
    seen: set[tuple[int, Any]] = set()
    stack: list[tuple[_Node, Any]] = []
    longest: list[_Node] = []
    budget = SLICE
    node = head.next
    while True:
        fn = node.fn
        if fn is not None:
            new = fn(state)
            if new is not ILLEGAL:
                key = (bits | node.bit, new)
                if key not in seen:
                    seen.add(key)
                    stack.append((node, state))
                    state = new
                    bits = key[0]
                    _lift(node)
                    node = head.next
                    continue
            node = node.next
            continue
        if node.op is None:  # the end: every known operation is linearized
            return _Search(True, [n.op for n, _ in stack if n.op is not None])
        if not stack:
            return _Search(False, [n.op for n in longest if n.op is not None])
        if len(stack) > len(longest):
            longest = [n for n, _ in stack]
        budget -= 1
        if not budget:
            budget = SLICE
            yield
        node, state = stack.pop()
        bits ^= node.bit
        _unlift(node)
        node = node.next


def search(ops: Sequence[Operation], model: Model, deadline: float | None) -> _Search:
    """Run the search to the end; raise `_Timeout` once past ``deadline``."""
    steps = search_steps(ops, model)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: _Search = done.value
            return result
        if deadline is not None and time.monotonic() > deadline:
            raise _Timeout


def _lift(node: _Node) -> None:
    prev, nxt = node.prev, node.next
    prev.next = nxt
    nxt.prev = prev
    match = node.match
    if match is not None:
        prev, nxt = match.prev, match.next
        prev.next = nxt
        nxt.prev = prev


def _unlift(node: _Node) -> None:
    match = node.match
    if match is not None:
        match.prev.next = match
        match.next.prev = match
    node.prev.next = node
    node.next.prev = node


def _minimize(ops: list[Operation], model: Model, deadline: float) -> tuple[list[Operation], bool]:
    """Shrink a non-linearizable set until dropping any one operation fixes it.

    Drops chunks first (halving their size), then single operations until a
    full pass changes nothing; only candidates proven non-linearizable are
    kept, so the result always is. Returns the set and whether it is minimal
    (False if ``deadline`` cut the shrinking short).
    """
    current = list(ops)
    chunk = max(1, len(current) // 2)
    try:
        while True:
            changed = False
            i = 0
            while i < len(current):
                candidate = current[:i] + current[i + chunk :]
                if candidate and not search(candidate, model, deadline).ok:
                    current = candidate
                    changed = True
                else:
                    i += chunk
            if chunk > 1:
                chunk = max(1, chunk // 2)
            elif not changed:
                return current, True
    except _Timeout:
        return current, False


def _as_history(history: History | Iterable[Event]) -> History:
    if isinstance(history, History):
        return history
    return History(history)


@dataclass
class _Decision:
    """What the interleaved search over all parts concluded."""

    outcome: Outcome
    order: list[Operation]
    failed: tuple[Hashable, list[Operation]] | None = None


def _decide(
    parts: list[tuple[Hashable, list[Operation]]], model: Model, deadline: float | None
) -> _Decision:
    """Search all parts, round-robin one slice at a time.

    One failing part decides the whole history, and in a non-linearizable
    history some parts fail in milliseconds while an exhaustive search of
    another would take minutes: sharing time fairly finds the quick
    refutation (Porcupine gets the same effect from one goroutine per part).
    """
    active = [(i, label, part, search_steps(part, model)) for i, (label, part) in enumerate(parts)]
    orders: dict[int, list[Operation]] = {}
    while active:
        still = []
        for i, label, part, steps in active:
            try:
                next(steps)
            except StopIteration as done:
                found: _Search = done.value
                if not found.ok:
                    return _Decision(Outcome.NOT_LINEARIZABLE, found.order, (label, part))
                orders[i] = found.order
                continue
            still.append((i, label, part, steps))
        active = still
        if active and deadline is not None and time.monotonic() > deadline:
            return _Decision(Outcome.UNKNOWN, [])
    order = [op for i in sorted(orders) for op in orders[i]]
    return _Decision(Outcome.LINEARIZABLE, order)


WITNESS_SECONDS = 2.0
"""Shrinking time allowed beyond the decision when there is no timeout."""


def linearizable(
    history: History | Iterable[Event],
    model: Model,
    timeout: float | None = None,
    *,
    witness: bool = True,
) -> Verdict:
    """Decide whether ``history`` could have come from a correct ``model``.

    ``timeout`` (seconds) bounds the whole call; when it runs out before a
    decision the verdict is `Outcome.UNKNOWN`. A failure is then shrunk to a
    smallest unorderable set within what is left of the timeout (without one,
    within `WITNESS_SECONDS` or ten times the decision time, whichever is
    more). With ``witness=False`` that step is skipped, which is all a yes/no
    caller needs.
    """
    if timeout is not None and timeout < 0:
        raise UsageError("timeout must be >= 0")
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    ops = [op for op in _as_history(history).operations() if op.status != "fail"]
    decision = _decide(partition_of(model, ops), model, deadline)
    if decision.failed is None:
        return Verdict(
            decision.outcome, time.monotonic() - start, tuple(decision.order), model=model
        )
    label, part = decision.failed
    smallest, minimal = part, False
    if witness:
        now = time.monotonic()
        budget = now + max(WITNESS_SECONDS, 10 * (now - start))
        smallest, minimal = _minimize(part, model, min(budget, deadline or budget))
    return Verdict(
        Outcome.NOT_LINEARIZABLE,
        time.monotonic() - start,
        tuple(decision.order),
        tuple(smallest),
        minimal,
        label,
        model,
    )
