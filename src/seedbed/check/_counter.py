"""The counter check, Jepsen's counter: every read within what the increments allow.

Operations: ``add`` (value: the increment, an integer; negative ones are
allowed) and ``read`` (result: the count). The counter starts at 0 (or
``initial``). For a read, an add is

- *certain* when it was acknowledged before the read began: it is counted;
- *possible* when it began before the read ended, is not certain and did
  not fail: it may be counted or not (an acknowledged one concurrent with
  the read, or one of unknown outcome);
- otherwise not counted.

So the read must lie between ``initial + certain + the possible negative
ones`` and ``initial + certain + the possible positive ones``; a read outside
is **out-of-bounds** (refutes). Jepsen's checker assumes increments are
never negative; these bounds are the same when they are not.

Cost: one sweep over the events with running sums (what was invoked so far,
what was certain when each read began), linear in the history.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from seedbed.check._history import History, Operation
from seedbed.check._verdict import CheckVerdict, Finding, decide, integer, only, shown


@dataclass
class _Sums:
    """Running sums over the events so far: invoked and certain, split by sign."""

    invoked_up: int = 0
    invoked_down: int = 0
    certain_up: int = 0
    certain_down: int = 0
    certain_adds: int = 0


def check_counter(history: History, *, initial: int = 0, allow_empty: bool = False) -> CheckVerdict:
    """Check a counter history (``add`` and ``read``) as Jepsen's counter does.

    Invalid when a read is out of bounds. Vacuous, unless ``allow_empty``,
    when no read began after an add was acknowledged: nothing could show
    that acknowledged increments are counted.
    """
    began = time.monotonic()
    only(history, "counter", ("add", "read"))
    findings, reads, shown = _sweep(_by_event(history), initial)
    acknowledged = sum(1 for op in history.operations() if op.f == "add" and op.status == "ok")
    counts = {
        "adds": sum(1 for op in history.operations() if op.f == "add"),
        "acknowledged": acknowledged,
        "reads": reads,
        "out-of-bounds": len(findings),
    }
    reason = None if shown else _why_vacuous(acknowledged, reads)
    seconds = time.monotonic() - began
    return decide("counter", history, counts, findings, reason, seconds, allow_empty)


def _by_event(history: History) -> list[Operation | None]:
    """The operation each event begins or ends (None for failed ones), values checked."""
    at: list[Operation | None] = [None] * len(history)
    for op in history.operations():
        if op.status == "fail":
            continue  # certainly no effect; a failed read saw nothing
        if op.f == "add":
            integer(history, op, op.value, "counter model: an add's value")
        if op.f == "read" and op.status == "ok":
            integer(history, op, op.result, "counter model: a read's result")
        at[op.call] = op
        if op.ret is not None:
            at[op.ret] = op
    return at


def _sweep(at: list[Operation | None], initial: int) -> tuple[list[Finding], int, int]:
    """Out-of-bounds reads, ok reads, and reads that began after an acknowledged add."""
    sums, starts = _Sums(), {}
    findings: list[Finding] = []
    reads = shown = 0
    for index, op in enumerate(at):
        if op is None:
            continue
        if op.f == "add":
            _add(sums, op, index)
        elif index == op.call:
            starts[op.id] = (sums.certain_up, sums.certain_down, sums.certain_adds)
        else:  # an ok read's end: its bounds are known now
            up, down, certain = starts.pop(op.id)
            low, high = initial + up + sums.invoked_down, initial + down + sums.invoked_up
            reads, shown = reads + 1, shown + (certain > 0)
            if not low <= op.result <= high:
                findings.append(_out_of_bounds(op, low, high))
    return findings, reads, shown


def _add(sums: _Sums, op: Operation, index: int) -> None:
    delta: int = op.value
    if index == op.call:
        if delta >= 0:
            sums.invoked_up += delta
        else:
            sums.invoked_down += delta
    elif op.status == "ok":  # its acknowledgement: certain for reads that begin from now
        if delta >= 0:
            sums.certain_up += delta
        else:
            sums.certain_down += delta
        sums.certain_adds += 1


def _out_of_bounds(read: Operation, low: int, high: int) -> Finding:
    value: int = read.result
    side, by = ("below", low - value) if value < low else ("above", value - high)
    text = (
        f"read #{read.id} returned {shown(value)}, but the adds allow only "
        f"{shown(low)}..{shown(high)} then ({side} by {shown(by)})"
    )
    return Finding("out-of-bounds", value, (read,), text, True)


def _why_vacuous(acknowledged: int, reads: int) -> str:
    if not reads:
        return (
            "no add was acknowledged and no read succeeded"
            if not acknowledged
            else ("no read succeeded")
        )
    if not acknowledged:
        return "no add was acknowledged"
    return "no read began after an add was acknowledged"
