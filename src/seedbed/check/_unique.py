"""The unique-ids check, Jepsen's unique-ids: no id is handed out twice.

Operations: ``generate`` (result: the id, any value that can be compared).
An id returned by two acknowledged generates is **duplicated** (refutes),
reported with every operation that returned it. Generates that failed or
whose outcome is unknown returned nothing to compare. Cost: one pass, a
dictionary of the ids seen.
"""

from __future__ import annotations

import time
from collections.abc import Hashable

from seedbed.check._history import History, Operation
from seedbed.check._verdict import CheckVerdict, Finding, decide, hashable, only, shown


def check_unique_ids(history: History, *, allow_empty: bool = False) -> CheckVerdict:
    """Check an id generator's history (``generate``): every id returned once.

    Vacuous, unless ``allow_empty``, when fewer than two generates were
    acknowledged: there is nothing to compare.
    """
    began = time.monotonic()
    only(history, "unique-ids", ("generate",))
    first: dict[Hashable, Operation] = {}
    again: dict[Hashable, list[Operation]] = {}
    attempted = acknowledged = 0
    for op in history.operations():
        attempted += 1
        if op.status != "ok":
            continue
        acknowledged += 1
        key = hashable(history, op, op.result, "id")
        earlier = first.setdefault(key, op)
        if earlier is not op:
            again.setdefault(key, [earlier]).append(op)
    findings = [_duplicated(key, ops) for key, ops in again.items()]
    counts = {
        "generates": attempted,
        "acknowledged": acknowledged,
        "distinct": len(first),
        "duplicated": len(findings),
    }
    reason = None if acknowledged >= 2 else _why_vacuous(acknowledged)
    seconds = time.monotonic() - began
    return decide("unique-ids", history, counts, findings, reason, seconds, allow_empty)


def _duplicated(key: Hashable, ops: list[Operation]) -> Finding:
    named = ", ".join(f"#{op.id}" for op in ops[:6]) + (", ..." if len(ops) > 6 else "")
    text = f"id {shown(key)} was returned {len(ops)} times ({named})"
    return Finding("duplicated", key, tuple(ops), text, True)


def _why_vacuous(acknowledged: int) -> str:
    if not acknowledged:
        return "no generate succeeded"
    return "only one generate succeeded: there is nothing to compare its id with"
