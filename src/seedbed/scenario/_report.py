"""The failure report: everything needed to understand and replay a failed seed.

DESIGN.md §4: type, message, seed, scenario, step, virtual time, the line of
the user's code where it failed and on which node, the drawn fault profile,
then the story (the faults and world events that touched the failure, in
time order: `_story`), the last trace events in readable form (draws only on
request), and the commands that view, shrink and replay it. `str()` of a
failure with a report is the message followed by `describe()`.
"""

from __future__ import annotations

import asyncio
import os
import re
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from seedbed._core.trace import Field
from seedbed.errors import view_command
from seedbed.scenario._story import entry_line, select

LAST_EVENTS = 10  # events shown after the story by default (draws left out)
ALL_EVENTS = 60  # events kept (and shown with `events="all"`), draws and deliveries included
STORY = 16  # story entries shown by default
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
# Left out of a report's last events unless all are asked for: entropy draws,
# the random module's reseeding, the digests of delivered bytes (what the hash
# folds; `net.*` events say the same in words), and the steps of seedbed's own tasks.
_PLUMBING = re.compile(
    r"^t=\S+ (draw |unseed |deliver |"
    r"task \d+ \S+ (_run_main|_call_main|Simulation\._\w+|_Run\._\w+)$)"
)


@dataclass
class FailureReport:
    """A failed run, as data (`as_dict`) and as text (`describe`).

    Made for a Scenario's failures, and by the harness for a plain async main's
    and an `f(seed)` target's (`scenario` is then None). `story` holds the
    faults and world events of the run (see `_story`), `last_events` the
    trace's tail in words (draws included); `subjects` the nodes the failure
    is about (its failing `node`, then those its message names).
    """

    scenario: str | None
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
    node: str | None = None
    story: list[dict[str, Any]] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self, events: str = "story") -> str:
        """The report in words: where, the pressure, the story, the last events
        (without draws unless `events="all"`, which also shows the whole story),
        and the commands that view, shrink and replay the run."""
        everything = events == "all"
        scenario = f" scenario={self.scenario}" if self.scenario else ""
        lines = [
            f"  seed={self.seed}{scenario} step={self.step} t={self.virtual_time:.6f}s",
            f"  at: {self.location or '(no line of user code: see the events)'}"
            + (f" on {self.node}" if self.node else ""),
        ]
        if self.scenario:
            lines.append(f"  fault profile: {describe_profile(self.profile)}")
        if self.params:
            shown = ", ".join(f"{key}={value!r}" for key, value in self.params.items())
            lines.append(f"  world parameters: {shown}")
        if self.faults:
            lines.append(f"  faults injected: {describe_faults(self.faults)}")
        lines.extend(self._story_lines(everything))
        lines.extend(self._event_lines(everything))
        lines.extend(self._commands())
        return "\n".join(lines)

    def _story_lines(self, everything: bool) -> list[str]:
        if not self.story:
            return []
        keep = len(self.story) if everything else STORY
        shown, left = select(self.story, self.subjects, keep)
        about = f"; * touched {', '.join(self.subjects)}" if self.subjects else ""
        lines = [f"  what happened (faults and world events, in time order{about}):"]
        lines.extend(f"   {entry_line(entry, self.subjects)}" for entry in shown)
        if left:
            lines.append(f"    ({left} more: --events all shows them)")
        return lines

    def _event_lines(self, everything: bool) -> list[str]:
        tail = [line for line in self.last_events if everything or not is_plumbing(line)]
        tail = tail if everything else tail[-LAST_EVENTS:]
        if not tail:
            return []
        hidden = "" if everything else ", draws hidden: --events all shows them"
        lines = [f"  last {len(tail)} events{hidden}:"]
        lines.extend(f"    {event}" for event in tail)
        return lines

    def _commands(self) -> list[str]:
        """The view and shrink commands, then the replay line, which stays last."""
        lines = []
        view = view_command(self.replay)
        if view:
            lines.append(f"  view:   {view}")
        shrink = shrink_command(self.replay)
        if shrink:
            lines.append(f"  shrink: {shrink}")
        lines.append(f"  replay: {self.replay}")
        return lines


def is_plumbing(line: str) -> bool:
    """Whether a report's event line is left out unless all events are asked for."""
    return _PLUMBING.match(line) is not None


def shrink_command(replay: str) -> str | None:
    """The `seedbed shrink` command for the run a `seedbed run` command replays
    (None for a Python call): shrink takes run's flags but --strict."""
    prefix = "seedbed run "
    if not replay.startswith(prefix):
        return None
    flags = replay[len(prefix) :].replace(" --strict", "")
    return f"seedbed shrink {flags} --out shrunk.json"


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
    """'partition 2 (1 effective), datagram_loss 3 (3 effective); none: crash, clog':
    the classes that injected a fault, then those that are on but injected none."""
    fired = [kind for kind, counts in faults.items() if counts["injected"]]
    idle = [kind for kind, counts in faults.items() if not counts["injected"]]
    text = ", ".join(
        f"{kind} {faults[kind]['injected']} ({faults[kind]['effective']} effective)"
        for kind in fired
    )
    if idle:
        text += ("; " if text else "") + f"none of: {', '.join(idle)}"
    return text


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
    """A path as the user would type it: relative to the current directory if under
    it (as given, then with links resolved: a project reached through a link)."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        pass
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path
