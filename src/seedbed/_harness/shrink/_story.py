"""The story of a shrunk run: its faults and world events (from its failure
report: see `seedbed.scenario._story`), the schedule choices that still
deviate from the typical (FIFO, the first node), and the last events.

A schedule deviation is a draw of the loop's or the scheduler's stream the
shrinker could not make typical: the order of timers due together, the node
that ran next, a task step moved ahead. Its time comes from the trace (the
k-th draw of a stream in the trace is the k-th of its recorded choices), and
the events right after it say what ran: a name, not the raw draw.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seedbed._core.choices import Choice
from seedbed._harness.shrink._trial import is_quiet
from seedbed.scenario._report import describe_events

LAST = 12
SCHEDULE = ("loop", "scheduler")  # the streams whose draws order what runs
_SHOWN_DEVIATIONS = 12


def read_events(path: str | Path) -> list[list[Any]]:
    """The events of a trace file this process just wrote (header and end skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [event for event in map(json.loads, lines[1:]) if isinstance(event, list)]


def last_lines(events: Sequence[Sequence[Any]], keep: int = LAST) -> list[str]:
    """The last `keep` events but draws, in words, each with the virtual time it
    happened at."""
    now = 0
    timed = []
    for event in events:
        if event and event[0] == "time" and len(event) in (2, 3):
            now = int(event[1])
            continue
        if event and event[0] == "at" and len(event) == 3:
            now = int(event[2])
            continue
        if event and event[0] in ("draw", "unseed"):
            continue  # raw draws: the schedule lines say what the run chose
        timed.append((now, event))
    shown = timed[-keep:]
    words = describe_events([event for _, event in shown], keep=len(shown))
    return [f"t={at / 1e9:.6f}s {text}" for (at, _), text in zip(shown, words, strict=True)]


def schedule_lines(
    events: Sequence[Sequence[Any]], chosen: Sequence[Choice], keep: int = _SHOWN_DEVIATIONS
) -> list[str]:
    """'t=0.561000s which node runs next: not the first (then: task 9 Worker.run)',
    one per schedule choice of `chosen` that deviates from its typical default."""
    off = _deviating(chosen)
    if not off:
        return []
    lines: list[str] = []
    seen: dict[str, int] = {}
    now, pending = 0, None
    for event in events:
        kind = event[0] if event else None
        if kind == "time" and len(event) in (2, 3):
            now = int(event[1])
            continue
        if kind == "at" and len(event) == 3:  # an event placed at its step and time
            now = int(event[2])
            continue
        if kind == "draw" and len(event) == 4 and str(event[1]) in SCHEDULE:
            stream = str(event[1])
            index = seen[stream] = seen.get(stream, -1) + 1
            if (stream, index) in off:
                pending = f"t={now / 1e9:.6f}s {_deviation(str(event[2]), event[3])}"
            continue
        if pending is not None and kind not in ("draw", "unseed"):
            lines.append(f"{pending} (then: {' '.join(map(str, event))})")
            pending = None
    if pending is not None:
        lines.append(pending)
    more = len(lines) - keep
    return lines[:keep] + ([f"({more} more)"] if more > 0 else [])


def _deviating(chosen: Sequence[Choice]) -> set[tuple[str, int]]:
    """(stream, index in that stream's draws) of each schedule choice off its default."""
    found, counts = set(), dict.fromkeys(SCHEDULE, -1)
    for choice in chosen:
        if choice.stream not in SCHEDULE:
            continue
        counts[choice.stream] += 1
        if not is_quiet(choice.value) and not choice.reason.endswith("cpu costs"):
            found.add((choice.stream, counts[choice.stream]))
    return found


def _deviation(reason: str, value: Any) -> str:
    if "," in str(value):
        return f"{reason}: not in FIFO order ({value})"
    return f"{reason}: option {value}, not the first"
