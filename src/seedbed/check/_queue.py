"""The queue check, Jepsen's total-queue: what goes in comes out, once.

Operations: ``enqueue`` (value: the element), ``dequeue`` (result: the
element taken; nothing when the queue was empty) and ``drain`` (result:
every element it took, a list). Elements may repeat (counts are compared,
as multisets), but unique elements make the findings easier to read. The
order elements come out in is not checked: that is a linearizability
question (a queue model), this check is about what got lost or made up.

- **lost** (refutes): acknowledged more times than dequeued. A dequeue of
  unknown outcome may have taken an element nobody saw, so each can account
  for one lost element (a drain of unknown outcome, for any number); lost
  elements refute only beyond what those can account for, and are reported
  either way (Jepsen's total-queue counts none of them: a timed-out dequeue
  there makes a lost element);
- **duplicated** (refutes): dequeued more times than enqueues were attempted
  (failed enqueues do not count: they certainly had no effect);
- **unexpected** (refutes): dequeued but never enqueued, or only by enqueues
  that failed, or by a dequeue that ended before any enqueue of it began;
- **recovered** (counted): dequeued although its enqueue's outcome was unknown.

The history must drain the queue for "lost" to mean anything: an element
still queued at the end is lost to this check. Cost: one pass, linear.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field

from seedbed.check._history import History, Operation
from seedbed.check._verdict import CheckVerdict, Finding, decide, elements, hashable, only

_UNBOUNDED = 1 << 62  # what a drain of unknown outcome may have taken


@dataclass
class _Element:
    """One element's enqueues (attempted, acknowledged, failed) and dequeues."""

    attempts: list[Operation] = field(default_factory=list)  # not failed
    acknowledged: int = 0
    failed: list[Operation] = field(default_factory=list)
    dequeues: list[Operation] = field(default_factory=list)


def check_queue(history: History, *, allow_empty: bool = False) -> CheckVerdict:
    """Check a queue history (``enqueue``, ``dequeue``, ``drain``) as total-queue does.

    Invalid when an element is duplicated or unexpected, or more are lost
    than dequeues of unknown outcome could have taken. Vacuous, unless
    ``allow_empty``, when no enqueue was acknowledged or no element was
    dequeued: nothing could show that what goes in comes out.
    """
    began = time.monotonic()
    only(history, "queue", ("enqueue", "dequeue", "drain"))
    table: dict[Hashable, _Element] = {}
    unknown_takes = 0
    for op in history.operations():
        if op.f == "enqueue":
            _enqueued(history, op, table)
        elif op.status == "ok":
            taken = (op.result,) if op.f == "dequeue" else elements(history, op, op.result, "queue")
            for element in taken:
                if element is not None or op.f == "drain":
                    element = hashable(history, op, element, "element")
                    table.setdefault(element, _Element()).dequeues.append(op)
        elif op.status == "info":
            unknown_takes += 1 if op.f == "dequeue" else _UNBOUNDED
    findings = _findings(table, unknown_takes)
    counts = _counts(history, table, findings, unknown_takes)
    reason = _why_vacuous(counts["acknowledged"], counts["dequeued"])
    return decide("queue", history, counts, findings, reason, time.monotonic() - began, allow_empty)


def _enqueued(history: History, op: Operation, table: dict[Hashable, _Element]) -> None:
    entry = table.setdefault(hashable(history, op, op.value, "element"), _Element())
    if op.status == "fail":
        entry.failed.append(op)
        return
    entry.attempts.append(op)
    entry.acknowledged += op.status == "ok"


def _findings(table: dict[Hashable, _Element], unknown_takes: int) -> list[Finding]:
    lost: list[Finding] = []
    others: list[Finding] = []
    missing = sum(max(0, e.acknowledged - len(e.dequeues)) for e in table.values())
    refutes = missing > unknown_takes
    for element, entry in table.items():
        taken = len(entry.dequeues)
        if entry.acknowledged > taken:
            lost.append(_lost(element, entry, refutes))
        unexpected = _unexpected(element, entry)
        if unexpected is not None:
            others.append(unexpected)
        elif taken > len(entry.attempts):
            others.append(_duplicated(element, entry))
    return lost + others


def _lost(element: Hashable, entry: _Element, refutes: bool) -> Finding:
    acked = [op for op in entry.attempts if op.status == "ok"]
    taken = len(entry.dequeues)
    if taken:
        how = f"acknowledged {_times(entry.acknowledged)} but dequeued {_times(taken)}"
    else:
        how = f"enqueue #{acked[0].id} was acknowledged but no dequeue took it"
    maybe = "" if refutes else " (a dequeue of unknown outcome may have taken it)"
    ops = tuple(sorted((*acked, *entry.dequeues), key=lambda op: op.id))
    return Finding("lost", element, ops, f"element {element!r}: {how}{maybe}", refutes)


def _unexpected(element: Hashable, entry: _Element) -> Finding | None:
    if not entry.dequeues:
        return None
    first = entry.dequeues[0]
    if not entry.attempts:
        if entry.failed:
            why = f"but every enqueue of it failed (#{entry.failed[0].id})"
            ops = (*entry.failed[:1], first)
        else:
            why, ops = "but it was never enqueued", (first,)
        return Finding(
            "unexpected", element, ops, f"element {element!r}: #{first.id} took it {why}", True
        )
    begun = min(op.call for op in entry.attempts)
    early = next((op for op in entry.dequeues if op.ret is not None and op.ret < begun), None)
    if early is None:
        return None
    enqueue = min(entry.attempts, key=lambda op: op.call)
    text = (
        f"element {element!r}: #{early.id} took it before any enqueue of it (#{enqueue.id}) began"
    )
    return Finding("unexpected", element, (enqueue, early), text, True)


def _duplicated(element: Hashable, entry: _Element) -> Finding:
    taken, attempts = len(entry.dequeues), len(entry.attempts)
    text = (
        f"element {element!r}: dequeued {_times(taken)} "
        f"({', '.join('#' + str(op.id) for op in entry.dequeues[:6])}) but enqueued "
        f"{_times(attempts)}"
    )
    ops = tuple(sorted((*entry.attempts, *entry.dequeues), key=lambda op: op.id))
    return Finding("duplicated", element, ops, text, True)


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _counts(
    history: History, table: dict[Hashable, _Element], findings: list[Finding], unknown: int
) -> dict[str, int]:
    recovered = sum(
        min(len(e.dequeues), len(e.attempts)) - min(len(e.dequeues), e.acknowledged)
        for e in table.values()
    )
    kinds = [f.kind for f in findings]
    return {
        "enqueues": sum(1 for op in history.operations() if op.f == "enqueue"),
        "acknowledged": sum(e.acknowledged for e in table.values()),
        "dequeued": sum(len(e.dequeues) for e in table.values()),
        "lost": sum(max(0, e.acknowledged - len(e.dequeues)) for e in table.values()),
        "duplicated": kinds.count("duplicated"),
        "unexpected": kinds.count("unexpected"),
        "recovered": recovered,
        "unknown-dequeues": sum(
            1 for op in history.operations() if op.f != "enqueue" and op.status == "info"
        ),
    }


def _why_vacuous(acknowledged: int, dequeued: int) -> str | None:
    if acknowledged and dequeued:
        return None
    if not acknowledged and not dequeued:
        return "no enqueue was acknowledged and no element was dequeued"
    return "no enqueue was acknowledged" if not acknowledged else "no element was dequeued"
