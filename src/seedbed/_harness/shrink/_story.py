"""The story of a run, from its trace: the faults, when and where, and the
last events before the failure.

A fault shows in the trace as the nemesis's labelled draws ("nemesis: crash
which node"), the world's own events (`crash n2`, `start n2`, a link's
state `net.link n1 n2 dropped`, a failpoint), and buggify sites that fired;
virtual time comes from the trace's time events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from seedbed.scenario._report import describe_events

LAST = 12
_PLUMBING = ("nemesis: time to next fault", "nemesis: which fault")


def read_events(path: str | Path) -> list[list[Any]]:
    """The events of a trace file this process just wrote (header and end skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [event for event in map(json.loads, lines[1:]) if isinstance(event, list)]


def fault_lines(events: Iterable[Sequence[Any]]) -> list[str]:
    """'t=0.412000s crash n2', one line per fault-related event, in order."""
    now = 0
    crashed: set[str] = set()
    lines = []
    for event in events:
        kind = event[0] if event else None
        said = None
        if kind == "time" and len(event) in (2, 3):
            now = int(event[1])
        elif kind == "at" and len(event) == 3:
            now = int(event[2])
        elif kind == "crash" and len(event) >= 2:
            crashed.add(str(event[1]))
            said = f"crash {event[1]}"
        elif kind == "start" and len(event) >= 2 and str(event[1]) in crashed:
            said = f"restart {event[1]}"
        elif kind == "nemesis" or kind == "failpoint":
            said = " ".join(map(str, event))
        elif kind == "net.link" and len(event) == 4:
            said = f"link {event[1]}->{event[2]} {event[3]}"
        elif kind == "draw" and len(event) == 4:
            said = _fault_draw(str(event[1]), str(event[2]), event[3])
        if said is not None:
            lines.append(f"t={now / 1e9:.6f}s {said}")
    return lines


def _fault_draw(stream: str, reason: str, value: Any) -> str | None:
    if stream == "nemesis" and reason not in _PLUMBING:
        return f"{reason.removeprefix('nemesis: ')} = {value}"
    if stream == "buggify" and reason.startswith("buggify fires") and value == 1:
        return f"buggify fired: {reason.removeprefix('buggify fires: ')}"
    return None


def last_lines(events: Sequence[Sequence[Any]], keep: int = LAST) -> list[str]:
    """The last `keep` events in words, each with the virtual time it happened at."""
    now = 0
    timed = []
    for event in events:
        if event and event[0] == "time" and len(event) in (2, 3):
            now = int(event[1])
            continue
        if event and event[0] == "at" and len(event) == 3:
            now = int(event[2])
            continue
        timed.append((now, event))
    shown = timed[-keep:]
    words = describe_events([event for _, event in shown])
    return [f"t={at / 1e9:.6f}s {text}" for (at, _), text in zip(shown, words, strict=True)]
