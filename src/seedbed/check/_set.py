"""The set check, Jepsen's set-full: every acknowledged add is in every later read.

Operations: ``add`` (value: the element, each element added once; an add
that failed may be retried with the same element) and ``read`` (result: the
elements present, a list or set; nothing, for an empty set). An add of
unknown outcome may or may not have happened; a failed one did not.

Real-time order is the order of the events. For each element:

- *known*: from the earlier of its add's acknowledgement and the end of the
  first read that saw it;
- *last present*: the latest-invoked read that saw it;
- *last absent*: the latest-invoked read that did not.

and so one outcome:

- **stable**: seen, and seen by a read invoked after every read that missed it;
- **lost** (refutes): known, then missed by a read invoked after it was known
  and after every read that saw it: it never came back;
- **never-read** (informs): neither; no read began once it was known, or its
  add's outcome is unknown and no read saw it;
- **stale**: stable, but a read invoked after it was known missed it (a read
  that went back in time; refutes only with ``linearizable=True``).

Reads never invent elements: one returning an element no add attempted, one
whose add failed, or one whose add began only after the read ended, is
**unexpected**; one returning an element twice, **duplicated** (both refute).

Cost: one pass forward over the reads for what they saw, one pass backward
for what they missed, linear in the history's size (operations plus elements
read). Jepsen's set-full compares every read with every element, which is
quadratic when reads return little. Going backward, the elements present in
every read so far shrink to those in the read before, so each read costs its
own length and each element is dropped once.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from seedbed.check._history import History, HistoryError, Operation
from seedbed.check._verdict import (
    CheckVerdict,
    Finding,
    decide,
    elements,
    hashable,
    only,
    refuse,
    shown,
)

_NEVER = 1 << 62  # an event index no history reaches: "not known"


@dataclass
class _Reads:
    """What the ok reads saw, per element (the forward pass)."""

    ops: list[tuple[Operation, tuple[Any, ...]]]
    first_seen: dict[Hashable, Operation] = field(default_factory=dict)  # ended earliest
    last_present: dict[Hashable, Operation] = field(default_factory=dict)  # invoked latest
    findings: list[Finding] = field(default_factory=list)
    invented: set[Hashable] = field(default_factory=set)  # reported unexpected (membership only)


def check_set(
    history: History, *, linearizable: bool = False, allow_empty: bool = False
) -> CheckVerdict:
    """Check a set history (``add`` and ``read``) as Jepsen's set-full does.

    Invalid when an element is lost, unexpected or duplicated (and, with
    ``linearizable``, stale). Vacuous, unless ``allow_empty``, when no
    element is stable: no read ever showed an added element that stayed, so
    the history cannot show that acknowledged adds survive.
    """
    began = time.monotonic()
    only(history, "set", ("add", "read"))
    adds = _adds(history)
    seen = [
        (op, elements(history, op, op.result, "set"))
        for op in history.operations()
        if op.f == "read" and op.status == "ok"
    ]
    reads = _forward(seen, adds, _failed_adds(history))
    outcomes = _outcomes(adds, reads, _backward(adds, reads), linearizable)
    findings = outcomes["lost"] + reads.findings + outcomes["stale"] + outcomes["never-read"]
    acknowledged = sum(1 for op in adds.values() if op.status == "ok")
    counts = {
        "adds": sum(1 for op in history.operations() if op.f == "add"),
        "acknowledged": acknowledged,
        "reads": len(seen),
        "stable": len(outcomes["stable"]),
        "lost": len(outcomes["lost"]),
        "stale": len(outcomes["stale"]),
        "never-read": len(outcomes["never-read"]),
        "unexpected": sum(1 for f in reads.findings if f.kind == "unexpected"),
        "duplicated": sum(1 for f in reads.findings if f.kind == "duplicated"),
    }
    any_seen = not reads.first_seen.keys().isdisjoint(adds)
    reason = None if outcomes["stable"] else _why_vacuous(acknowledged, len(seen), any_seen)
    return decide("set", history, counts, findings, reason, time.monotonic() - began, allow_empty)


def _adds(history: History) -> dict[Hashable, Operation]:
    """Each element's add that did not fail, in invocation order; a second is refused."""
    adds: dict[Hashable, Operation] = {}
    try:
        for op in history.operations():
            if op.f == "add" and op.status != "fail":
                if op.value in adds:
                    raise _twice(history, adds[op.value], op)
                adds[op.value] = op
    except TypeError:  # an element that cannot be hashed: name it, the slow way
        for op in history.operations():
            if op.f == "add":
                hashable(history, op, op.value, "element")
        raise
    return adds


def _twice(history: History, earlier: Operation, op: Operation) -> HistoryError:
    return refuse(
        history,
        op,
        f"set model: element {shown(op.value)} is added twice (#{earlier.id} and #{op.id}); "
        "each element must be added once (or only retried after a failed add)",
    )


def _failed_adds(history: History) -> dict[Hashable, Operation]:
    return {
        op.value: op
        for op in history.operations()
        if op.f == "add" and op.status == "fail" and _can_hash(op.value)
    }


def _can_hash(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _forward(
    seen: list[tuple[Operation, tuple[Any, ...]]],
    adds: dict[Hashable, Operation],
    failed: dict[Hashable, Operation],
) -> _Reads:
    """When each element was first seen, and what the reads duplicated or invented.

    Set operations over whole reads (in C): each read is hashed once, and
    the elements not seen yet shrink as reads see them, so later reads cost
    little more than their hashing. Per-element Python work is spent only on
    what refutes the history.
    """
    reads = _Reads(seen)
    added, unseen = set(adds), set(adds)
    found: list[tuple[int, int, Finding]] = []  # (read, position): in the order read
    for read, returned in sorted(seen, key=lambda pair: pair[0].ret or 0):  # earliest end first
        here = set(returned)
        if len(here) != len(returned):
            found.extend((read.id, 0, f) for f in _duplicates(read, returned))
        if unknown := here - added:
            found.extend(
                (read.id, position, _unexpected(e, read, None, failed.get(e)))
                for position, e in enumerate(returned)
                if e in unknown
            )
        if unseen and (hits := unseen & here):
            reads.first_seen.update(dict.fromkeys(hits, read))
            unseen -= hits
    for _, _, finding in sorted(found, key=lambda item: item[:2]):
        if finding.kind == "unexpected":
            if finding.subject in reads.invented:
                continue  # each invented element once, with the first read that returned it
            reads.invented.add(finding.subject)
        reads.findings.append(finding)
    return reads


def _before_their_adds(early: dict[Hashable, Operation], reads: _Reads) -> None:
    """Elements a read returned before their add began: unexpected, and those reads
    do not count as seeing them (so their `first_seen` and `last_present` are redone)."""
    for element, add in early.items():
        reads.findings.append(_unexpected(element, reads.first_seen[element], add, None))
        reads.invented.add(element)
        del reads.first_seen[element]
        reads.last_present.pop(element, None)
    for read, returned in reads.ops:
        for element in set(returned) & early.keys():
            if (read.ret or 0) < early[element].call:
                continue
            reads.last_present[element] = read
            first = reads.first_seen.get(element)
            if first is None or (read.ret or 0) < (first.ret or 0):
                reads.first_seen[element] = read


def _duplicates(read: Operation, seen: tuple[Any, ...]) -> list[Finding]:
    counts: dict[Hashable, int] = {}
    for element in seen:
        counts[element] = counts.get(element, 0) + 1
    return [
        Finding(
            "duplicated",
            e,
            (read,),
            f"element {shown(e)}: read #{read.id} returned it {n} times",
            True,
        )
        for e, n in counts.items()
        if n > 1
    ]


def _unexpected(
    element: Any, read: Operation, add: Operation | None, failed: Operation | None
) -> Finding:
    if add is not None:
        why = f"before its add (#{add.id}) began"
        ops: tuple[Operation, ...] = (read, add)
    elif failed is not None:
        why = f"but its add (#{failed.id}) failed: it certainly had no effect"
        ops = tuple(sorted((read, failed), key=lambda op: op.id))
    else:
        why, ops = "but no add of it was attempted", (read,)
    return Finding(
        "unexpected",
        element,
        ops,
        f"element {shown(element)}: read #{read.id} returned it {why}",
        True,
    )


def _backward(adds: dict[Hashable, Operation], reads: _Reads) -> dict[Hashable, Operation]:
    """Each element's last read that saw it (into ``reads``) and last that did not.

    Backward over the reads: the elements not yet seen shrink as reads see
    them, and the elements present in every read so far shrink to a subset
    of the read before, so each read costs its hashing and each element is
    dropped from each set once.
    """
    absent: dict[Hashable, Operation] = {}
    not_yet, present_since = set(adds), set(adds)
    for read, returned in reversed(reads.ops):
        here = set(returned)
        if not_yet and (hits := not_yet & here):
            reads.last_present.update(dict.fromkeys(hits, read))
            not_yet -= hits
        if gone := present_since - here:
            absent.update(dict.fromkeys(gone, read))
            present_since -= gone
    return absent


def _outcomes(
    adds: dict[Hashable, Operation],
    reads: _Reads,
    last_absent: dict[Hashable, Operation],
    linearizable: bool,
) -> dict[str, list[Any]]:
    """Each added element's outcome, as findings (stable ones only listed), in add order.

    An element a read returned before its add began is unexpected, and that
    read does not count as seeing it (`_before_their_adds`).
    """
    out: dict[str, list[Any]] = {"lost": [], "stale": [], "never-read": [], "stable": []}
    first_seen, last_present, early = reads.first_seen, reads.last_present, {}
    for element, add in adds.items():
        seen = first_seen.get(element)
        if seen is not None and (seen.ret or 0) < add.call:
            early[element] = add
            continue
        absent = last_absent.get(element)
        _classify(element, add, seen, last_present.get(element), absent, linearizable, out)
    if early:
        _before_their_adds(early, reads)
        for element, add in early.items():
            seen, present = first_seen.get(element), last_present.get(element)
            absent = last_absent.get(element)
            _classify(element, add, seen, present, absent, linearizable, out)
    return out


def _classify(
    element: Any,
    add: Operation,
    seen: Operation | None,
    present: Operation | None,
    absent: Operation | None,
    linearizable: bool,
    out: dict[str, list[Any]],
) -> None:
    """Stable, stale, lost or never read (see the module's documentation)."""
    acknowledged = add.ret if add.status == "ok" and add.ret is not None else _NEVER
    known = min(acknowledged, _NEVER if seen is None or seen.ret is None else seen.ret)
    present_at = -1 if present is None else present.call
    absent_at = -1 if absent is None else absent.call
    if present is not None and absent_at < present_at:
        out["stable"].append(element)
        if absent is not None and known < absent_at:
            out["stale"].append(_stale(element, add, absent, present, linearizable))
    elif absent is not None and known < absent_at and present_at < absent_at:
        out["lost"].append(_lost(element, add, seen, present, absent))
    else:
        out["never-read"].append(_never_read(element, add))


def _known_from(add: Operation, seen: Operation | None) -> str:
    if add.status == "ok" and (seen is None or (add.ret or 0) <= (seen.ret or 0)):
        return f"its add (#{add.id}) was acknowledged"
    assert seen is not None
    return f"read #{seen.id} saw it"


def _lost(
    element: Any,
    add: Operation,
    seen: Operation | None,
    present: Operation | None,
    absent: Operation,
) -> Finding:
    last = "no read ever saw it" if present is None else f"read #{present.id} saw it last"
    text = (
        f"element {shown(element)}: {_known_from(add, seen)} and {last}; read #{absent.id}, "
        "invoked after that, missed it, and no later read saw it again"
    )
    ops = (add, *(() if present is None else (present,)), absent)
    return Finding("lost", element, ops, text, True)


def _stale(
    element: Any, add: Operation, absent: Operation, present: Operation, linearizable: bool
) -> Finding:
    text = (
        f"element {shown(element)}: read #{absent.id} began after it was known present and "
        f"missed it; reads from #{present.id} on see it"
    )
    return Finding("stale", element, (add, absent, present), text, linearizable)


def _never_read(element: Any, add: Operation) -> Finding:
    if add.status == "ok":
        why = "no read began after its add was acknowledged"
    else:
        why = "its add's outcome is unknown and no read saw it"
    return Finding("never-read", element, (add,), f"element {shown(element)}: {why}", False)


def _why_vacuous(acknowledged: int, reads: int, any_seen: bool) -> str:
    if not reads:
        return "no add and no read succeeded" if not acknowledged else "no read succeeded"
    if not acknowledged and not any_seen:
        return "no add succeeded and no read saw an added element"
    return "no read that began after an element was added saw it"
