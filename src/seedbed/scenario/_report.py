"""The failure report: everything needed to understand and replay a failed seed.

DESIGN.md §4: type, message, seed, scenario, step, virtual time, the drawn
fault profile, what the nemesis did, the last trace events in readable form,
the line of the user's code where it failed, and the command that replays
it. `str()` of a scenario's failure is the message followed by `describe()`.
"""

from __future__ import annotations

import asyncio
import os
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from seedbed._core.trace import Field
from seedbed.errors import view_command

LAST_EVENTS = 20
_LIBRARY_DIRS = tuple(
    str(Path(folder).resolve()) + os.sep
    for folder in sorted(
        {
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # seedbed itself
            os.path.dirname(asyncio.__file__),
            sysconfig.get_paths()["stdlib"],
            sysconfig.get_paths()["platstdlib"],
        }
    )
)


@dataclass
class FailureReport:
    """A failed scenario run, as data (`as_dict`) and as text (`describe`)."""

    scenario: str
    seed: int
    step: int
    virtual_time: float
    profile: dict[str, Any] | None
    params: dict[str, Any]
    faults: dict[str, dict[str, int]]
    assertions: dict[str, dict[str, Any]]
    location: str | None
    last_events: list[str]
    replay: str
    # The world's node and client names: masked in the failure's identity.
    names: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        lines = [
            f"  seed={self.seed} scenario={self.scenario} step={self.step} "
            f"t={self.virtual_time:.6f}s",
            f"  at: {self.location or '(no line of user code: see the events)'}",
            f"  fault profile: {describe_profile(self.profile)}",
        ]
        if self.params:
            shown = ", ".join(f"{key}={value!r}" for key, value in self.params.items())
            lines.append(f"  world parameters: {shown}")
        if self.faults:
            lines.append(f"  faults injected: {describe_faults(self.faults)}")
        if self.last_events:
            lines.append(f"  last {len(self.last_events)} events:")
            lines.extend(f"    {event}" for event in self.last_events)
        if view_command(self.replay):  # before the replay line, which stays last
            lines.append(f"  view:   {view_command(self.replay)}")
        lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


def describe_profile(profile: dict[str, Any] | None) -> str:
    """'crash 0.05/s, partition 0.1/s, buggify on', or 'no faults'."""
    if profile is None:
        return "no faults"
    parts = []
    for key, value in profile.items():
        if key.endswith("_per_second") and value:
            parts.append(f"{key.removesuffix('_per_second')} {value:g}/s")
        elif key.endswith("_probability") and value:
            parts.append(f"{key.removesuffix('_probability')} p={value:g}")
    if profile.get("buggify"):
        parts.append("buggify on")
    return ", ".join(parts) or "no faults"


def describe_faults(faults: dict[str, dict[str, int]]) -> str:
    return ", ".join(
        f"{kind} {counts['injected']} ({counts['effective']} effective)"
        for kind, counts in faults.items()
    )


def describe_events(events: Iterable[Sequence[Field]], keep: int = LAST_EVENTS) -> list[str]:
    """The last `keep` trace events in words, each stamped with its virtual time:
    't=1.500000s draw net: latency n1->n2 = 0.002'. Time jumps and position
    markers are not events a reader needs on their own line: they stamp the
    events that follow them."""
    lines: list[str] = []
    now = ""
    for event in events:
        kind = event[0] if event else ""
        if kind == "time" and len(event) in (2, 3) and isinstance(event[1], int):
            now = f"t={event[1] / 1e9:.6f}s "
        elif kind == "at" and len(event) == 3 and isinstance(event[2], int):
            now = f"t={event[2] / 1e9:.6f}s "
        elif kind == "draw" and len(event) == 4:
            lines.append(f"{now}draw {event[1]}: {event[2]} = {event[3]}")
        else:
            lines.append(now + " ".join(str(field) for field in event))
    return lines[-keep:]


def user_location(error: BaseException) -> str | None:
    """'file:line' of the user's code where the error was raised, or None.

    The one place a failure's user frame is taken (the sweep's records, the
    failure report and the failure identity all ask here): the `location` an
    oracle stamped on the error (where an `always` was called, where an
    invariant or liveness predicate was declared) if any, else the innermost
    frame of the traceback, or of its cause, that is not seedbed's or the
    standard library's, so a failed assertion names the user's line, not the
    loop that ran it.
    """
    location = getattr(error, "location", None)
    if isinstance(location, str):
        path, _, line = location.rpartition(":")
        return f"{relative(path)}:{line}" if path else location
    for candidate in (error, error.__cause__):
        if candidate is None:
            continue
        found = _innermost_user_frame(candidate.__traceback__)
        if found is not None:
            return found
    return None


def _innermost_user_frame(tb: TracebackType | None) -> str | None:
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _is_library(code.co_filename):
            found = f"{relative(code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _is_library(path: str) -> bool:
    if path.startswith("<"):
        return True  # <frozen ...>, <string>
    return path.startswith(_LIBRARY_DIRS) or str(Path(path).resolve()).startswith(_LIBRARY_DIRS)


def relative(path: str) -> str:
    """A path as the user would type it: relative to the current directory if under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path
