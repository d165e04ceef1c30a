"""The linearizability check: can the operations be put in one legal order?

A history is linearizable when every operation can be given an instant
between its invocation and its completion such that, taken in the order of
those instants, the operations are a legal run of the sequential model.
Operations whose outcome is unknown may also be left out (they never took
effect); failed operations are left out always.

The search itself lives in `_search` (Wing & Gong / Lowe, memoized on the
linearized set and the model state) and the explanation of a failure in
`_witness`. This module runs them: a model that can split the history
(P-compositional, e.g. per key) has its parts searched in turns, and any
failing part decides the whole history.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from seedbed.check._history import Event, History, Operation, note_check
from seedbed.check._models import (
    Model,
    compile_step,
    describe_op,
    partition_of,
    vacuous_reason,
)
from seedbed.check._search import SearchResult, search_steps
from seedbed.check._witness import witness as find_witness
from seedbed.errors import UsageError


class Outcome(StrEnum):
    """The possible answers: ``vacuous`` is a history that could not have been
    refused (no read succeeded), which is no evidence of linearizability."""

    LINEARIZABLE = "linearizable"
    NOT_LINEARIZABLE = "not-linearizable"
    UNKNOWN = "unknown"
    VACUOUS = "vacuous"


@dataclass(frozen=True)
class Verdict:
    """What `linearizable` found.

    - ``outcome``: linearizable, not linearizable, unknown (timed out), or
      vacuous (nothing in the history could have been refused; ``reason``
      says why). ``bool(verdict)`` is True only for linearizable.
    - ``order``: for a linearizable history, one legal order of the operations
      that took effect (parts concatenated); otherwise the longest legal order
      the search reached in the failing part.
    - ``witness``: for a non-linearizable history, a smallest set of
      operations whose observed outcomes cannot all hold. It is judged with
      every other operation *relaxed*, not removed: read-only ones dropped,
      the others allowed to take effect within their interval or not at all,
      whatever they returned (removing the writes behind a read would make
      the read alone "unorderable": true, and useless). Relaxing any one
      more makes the rest orderable (when ``witness_minimal``; shrinking
      stops at the timeout). Empty when computed with ``witness=False``.
    - ``part``: the label of the failing part (the key, for the kv model).
    """

    outcome: Outcome
    seconds: float
    order: tuple[Operation, ...] = ()
    witness: tuple[Operation, ...] = ()
    witness_minimal: bool = False
    part: Hashable = None
    model: Model | None = field(default=None, repr=False, compare=False)
    history: History | None = field(default=None, repr=False, compare=False)
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.outcome is Outcome.LINEARIZABLE

    def explain(self) -> str:
        """A few lines for people: the verdict and, on failure, why."""
        if self.outcome is Outcome.VACUOUS:
            return f"cannot show linearizability: {self.reason} ({self.seconds:.3f} s)"
        lines = [f"{self.outcome} ({self.seconds:.3f} s)"]
        if self.outcome is not Outcome.NOT_LINEARIZABLE:
            return "\n".join(lines)
        model = self.model
        describe = str if model is None else (lambda op: describe_op(model, op))
        if self.part is not None:
            lines.append(f"in part {self.part!r}:")
        lines.append("these operations cannot be ordered:")
        lines += [f"  p{op.process} {describe(op)}   [{self._span(op)}]" for op in self.witness]
        lines.append(f"longest legal order ({len(self.order)} operations):")
        lines += [f"  {describe(op)}" for op in self.order]
        return "\n".join(lines)

    def _span(self, op: Operation) -> str:
        """Where the operation was seen: source lines when known, else event indices."""
        events = self.history
        if events is not None and events[op.call].line is not None:
            end = "end" if op.ret is None else events[op.ret].line
            return f"lines {events[op.call].line}-{end}"
        return f"events {op.call}-{'end' if op.ret is None else op.ret}"


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
    horizon: int = 0


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
                found: SearchResult = done.value
                if not found.ok:
                    failed = (label, part)
                    return _Decision(Outcome.NOT_LINEARIZABLE, found.order, failed, found.horizon)
                orders[i] = found.order
                continue
            still.append((i, label, part, steps))
        active = still
        if active and deadline is not None and time.monotonic() > deadline:
            return _Decision(Outcome.UNKNOWN, [])
    order = [op for i in sorted(orders) for op in orders[i]]
    return _Decision(Outcome.LINEARIZABLE, order)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the duration of a search.

    The search allocates a tuple per step and keeps most of them (the memo),
    which makes the collector rescan ever more objects that hold no cycles:
    a third of the time on large histories. Its state is restored after.
    The transactional check builds its graph the same way (a fifth of its
    time at 300,000 transactions went to the collector).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


WITNESS_SECONDS = 2.0
"""Shrinking time allowed beyond the decision when there is no timeout."""


def linearizable(
    history: History | Iterable[Event],
    model: Model,
    timeout: float | None = None,
    *,
    witness: bool = True,
    allow_empty: bool = False,
) -> Verdict:
    """Decide whether ``history`` could have come from a correct ``model``.

    ``timeout`` (seconds) bounds the whole call; when it runs out before a
    decision the verdict is `Outcome.UNKNOWN`. A failure is then shrunk to a
    smallest unorderable set within what is left of the timeout (without one,
    within `WITNESS_SECONDS` or ten times the decision time, whichever is
    more). With ``witness=False`` that step is skipped, which is all a yes/no
    caller needs.

    A history in which no operation the model could refuse succeeded (no
    read: every one timed out, or none was made) is `Outcome.VACUOUS`, not
    linearizable: passing it would be a false green. ``allow_empty=True``
    accepts such a history as linearizable.
    """
    if timeout is not None and timeout < 0:
        raise UsageError("timeout must be >= 0")
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    events = _as_history(history)
    ops = [op for op in events.operations() if op.status != "fail"]
    reason = None if allow_empty else vacuous_reason(model, ops)
    if reason is not None:
        for op in ops:  # an operation the model cannot read is bad input, vacuous or not
            compile_step(model, op)
        verdict = Verdict(Outcome.VACUOUS, time.monotonic() - start, model=model, reason=reason)
        note_check(events, "linearizability", verdict.explain, ())
        return verdict
    with collector_paused():
        decision = _decide(partition_of(model, ops), model, deadline)
    if decision.failed is None:
        return Verdict(
            decision.outcome, time.monotonic() - start, tuple(decision.order), model=model
        )
    label, part = decision.failed
    smallest: list[Operation] = []
    minimal = False
    if witness:
        now = time.monotonic()
        budget = now + max(WITNESS_SECONDS, 10 * (now - start))
        with collector_paused():
            smallest, minimal = find_witness(
                part, model, decision.horizon, min(budget, deadline or budget)
            )
    verdict = Verdict(
        Outcome.NOT_LINEARIZABLE,
        time.monotonic() - start,
        tuple(decision.order),
        tuple(smallest),
        minimal,
        label,
        model,
        events,
    )
    blamed = smallest or part  # without a witness, the whole part that failed
    note_check(events, "linearizability", verdict.explain, (op.call for op in blamed))
    return verdict
