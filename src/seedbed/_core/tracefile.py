"""Trace files: JSON Lines, readable by people and by `replay`.

Line 1 is a header object: `{"seedbed": VERSION, "python": "3.11.7",
"seed": 42, "options": {...}}`. Then one JSON array per event, e.g.
`["time", 1500000000]`, and last an end object `{"end": EVENTS, "hash":
HEX, "steps": N, "virtual_time_ns": T, "failure": null | "Type: message"}`.
A file without its end line was cut short and is refused. Nothing is ever
unpickled: the only reader is `json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core.trace import Event
from seedbed.errors import UsageError


@dataclass(frozen=True)
class TraceFile:
    """The contents of a trace file."""

    header: dict[str, Any]
    events: list[Event]
    end: dict[str, Any]

    @property
    def seed(self) -> int:
        return int(self.header["seed"])


def write_trace(
    path: str | Path, header: dict[str, Any], events: list[Event], end: dict[str, Any]
) -> None:
    """Write a whole trace; the end line goes last, so a cut file is detectable."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header, sort_keys=True) + "\n")
        for event in events:
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
        out.write(json.dumps(end, sort_keys=True) + "\n")


def _bad(path: str | Path, line: int, what: str) -> UsageError:
    return UsageError(
        f"{path}:{line}: {what}; this is not a complete seedbed trace: "
        "record it again with seedbed.run(..., trace=PATH)"
    )


def _parse_line(path: str | Path, number: int, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(path, number, f"not valid JSON ({exc.msg})") from None


def _check_event(path: str | Path, number: int, value: Any) -> Event:
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise _bad(path, number, "expected an event array starting with its kind")
    for field in value:
        if not isinstance(field, str | int | float) or isinstance(field, bool):
            raise _bad(path, number, f"event field {field!r} is not a string or number")
    return tuple(value)


def read_trace(path: str | Path) -> TraceFile:
    """Read and validate a trace file; any defect is a one-line `UsageError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the trace file ({exc})") from None
    lines = text.splitlines()
    if not text.strip():
        raise _bad(path, 1, "the file is empty")
    header = _parse_line(path, 1, lines[0])
    if not isinstance(header, dict) or "seedbed" not in header:
        raise _bad(path, 1, "the first line is not a seedbed trace header")
    if not isinstance(header.get("seed"), int) or not isinstance(header.get("options"), dict):
        raise _bad(path, 1, "the header lacks an integer seed or the run options")
    events: list[Event] = []
    for number in range(2, len(lines) + 1):
        value = _parse_line(path, number, lines[number - 1])
        if isinstance(value, dict):
            if number != len(lines) or "end" not in value:
                raise _bad(path, number, "unexpected object in the middle of the events")
            if value["end"] != len(events):
                raise _bad(
                    path, number, f"end line counts {value['end']} events, found {len(events)}"
                )
            return TraceFile(header, events, value)
        events.append(_check_event(path, number, value))
    raise _bad(path, len(lines), "the file ends without its end line (truncated)")
