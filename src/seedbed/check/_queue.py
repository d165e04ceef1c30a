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
from typing import Any

from seedbed.check._history import History, Operation
from seedbed.check._verdict import CheckVerdict, Finding, decide, elements, hashable, only, shown

_UNBOUNDED = 1 << 62  # what a drain of unknown outcome may have taken


@dataclass(slots=True)
class _Element:
    """One element's enqueues (attempted, acknowledged, failed) and dequeues."""

    attempts: list[Operation] = field(default_factory=list)  # not failed
    acknowledged: int = 0
    failed: list[Operation] = field(default_factory=list)
    dequeues: list[Operation] = field(default_factory=list)
    first_call: int = _UNBOUNDED  # when its first enqueue attempt began
    first_end: int = _UNBOUNDED  # when the first dequeue that took it ended


@dataclass
class _Table:
    """Every element, in order of first appearance, and the operations counted."""

    elements: dict[Hashable, _Element] = field(default_factory=dict)
    enqueues: int = 0
    unknown: int = 0  # dequeues and drains of unknown outcome
    unknown_takes: int = 0  # how many elements those may have taken

    def entry(self, history: History, op: Operation, element: Any) -> _Element:
        try:
            found = self.elements.get(element)
        except TypeError:  # cannot be hashed: refused, naming it
            hashable(history, op, element, "element")
            raise
        if found is None:
            found = self.elements[element] = _Element()
        return found


def check_queue(history: History, *, allow_empty: bool = False) -> CheckVerdict:
    """Check a queue history (``enqueue``, ``dequeue``, ``drain``) as total-queue does.

    Invalid when an element is duplicated or unexpected, or more are lost
    than dequeues of unknown outcome could have taken. Vacuous, unless
    ``allow_empty``, when no enqueue was acknowledged or no element was
    dequeued: nothing could show that what goes in comes out.
    """
    began = time.monotonic()
    only(history, "queue", ("enqueue", "dequeue", "drain"))
    table = _Table()
    for op in history.operations():
        if op.f == "enqueue":
            _enqueued(table, table.entry(history, op, op.value), op)
        elif op.status == "ok":
            taken = (op.result,) if op.f == "dequeue" else elements(history, op, op.result, "queue")
            for element in taken:
                if element is not None or op.f == "drain":
                    entry = table.entry(history, op, element)
                    entry.dequeues.append(op)
                    entry.first_end = min(entry.first_end, op.ret or 0)
        elif op.status == "info":
            table.unknown += 1
            table.unknown_takes += 1 if op.f == "dequeue" else _UNBOUNDED
    findings, counts = _findings(table)
    reason = _why_vacuous(counts["acknowledged"], counts["dequeued"])
    return decide("queue", history, counts, findings, reason, time.monotonic() - began, allow_empty)


def _enqueued(table: _Table, entry: _Element, op: Operation) -> None:
    table.enqueues += 1
    if op.status == "fail":
        entry.failed.append(op)
        return
    entry.attempts.append(op)
    entry.acknowledged += op.status == "ok"
    entry.first_call = min(entry.first_call, op.call)


def _findings(table: _Table) -> tuple[list[Finding], dict[str, int]]:
    """What each element shows, and the tallies, in one pass over the elements."""
    lost: list[tuple[Hashable, _Element]] = []
    others: list[Finding] = []
    acknowledged = dequeued = missing = recovered = 0
    for element, entry in table.elements.items():
        taken, attempts = len(entry.dequeues), len(entry.attempts)
        acknowledged += entry.acknowledged
        dequeued += taken
        missing += max(0, entry.acknowledged - taken)
        recovered += min(taken, attempts) - min(taken, entry.acknowledged)
        if entry.acknowledged > taken:
            lost.append((element, entry))
        if taken and (not attempts or entry.first_end < entry.first_call):
            others.append(_unexpected(element, entry))
        elif taken > attempts:
            others.append(_duplicated(element, entry))
    refutes = missing > table.unknown_takes
    kinds = [f.kind for f in others]
    counts = {
        "enqueues": table.enqueues, "acknowledged": acknowledged, "dequeued": dequeued,
        "lost": missing, "duplicated": kinds.count("duplicated"),
        "unexpected": kinds.count("unexpected"), "recovered": recovered,
        "unknown-dequeues": table.unknown,
    }  # fmt: skip
    return [_lost(element, entry, refutes) for element, entry in lost] + others, counts


def _lost(element: Hashable, entry: _Element, refutes: bool) -> Finding:
    acked = [op for op in entry.attempts if op.status == "ok"]
    taken = len(entry.dequeues)
    if taken:
        how = f"acknowledged {_times(entry.acknowledged)} but dequeued {_times(taken)}"
    else:
        how = f"enqueue #{acked[0].id} was acknowledged but no dequeue took it"
    maybe = "" if refutes else " (a dequeue of unknown outcome may have taken it)"
    ops = tuple(sorted((*acked, *entry.dequeues), key=lambda op: op.id))
    return Finding("lost", element, ops, f"element {shown(element)}: {how}{maybe}", refutes)


def _unexpected(element: Hashable, entry: _Element) -> Finding:
    first = entry.dequeues[0]
    if not entry.attempts:
        if entry.failed:
            why = f"but every enqueue of it failed (#{entry.failed[0].id})"
            ops = (*entry.failed[:1], first)
        else:
            why, ops = "but it was never enqueued", (first,)
        return Finding(
            "unexpected", element, ops, f"element {shown(element)}: #{first.id} took it {why}", True
        )
    early = min(entry.dequeues, key=lambda op: op.ret or 0)
    enqueue = min(entry.attempts, key=lambda op: op.call)
    text = f"element {shown(element)}: #{early.id} took it before any enqueue of it began"
    text += f" (the first: #{enqueue.id})"
    return Finding("unexpected", element, (enqueue, early), text, True)


def _duplicated(element: Hashable, entry: _Element) -> Finding:
    taken, attempts = len(entry.dequeues), len(entry.attempts)
    text = (
        f"element {shown(element)}: dequeued {_times(taken)} "
        f"({', '.join('#' + str(op.id) for op in entry.dequeues[:6])}) but enqueued "
        f"{_times(attempts)}"
    )
    ops = tuple(sorted((*entry.attempts, *entry.dequeues), key=lambda op: op.id))
    return Finding("duplicated", element, ops, text, True)


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _why_vacuous(acknowledged: int, dequeued: int) -> str | None:
    if acknowledged and dequeued:
        return None
    if not acknowledged and not dequeued:
        return "no enqueue was acknowledged and no element was dequeued"
    return "no enqueue was acknowledged" if not acknowledged else "no element was dequeued"
