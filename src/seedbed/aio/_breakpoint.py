"""Stopping a run at a step or a virtual time and opening the debugger there.

`seedbed run TARGET --seed N --break-at STEP|TIME` requests a break before
the run starts (`request`); every loop made while the request stands arms it
(a target that builds its own `Simulation` included), and the first stop
withdraws it, so the debugger opens once. The loop reaches the
point through the step budget it already checks, so an unarmed loop pays
nothing. For a step S the budget is lowered to S - 1, and when the loop
reaches it, the callback that will run step S is wrapped to open the
debugger first (a failure report's `step=S` is the callback that failed).
For a time T (seconds) the budget is lowered to 0, so every batch's costs
pass through the check, and the first callback to run at or past T is
wrapped. Then the real budget is restored; no batch is ever split, so the
run is the one being debugged.

The break calls `breakpoint()` (pdb, or whatever `PYTHONBREAKPOINT` names)
inside the context of the callback about to run, so `seedbed.current_node()`
names its node; the frame's locals hold `node`, `task` (the task it
resumes, if any), `frame` (the innermost frame of its await chain outside
asyncio and seedbed, the user's code: `frame.f_locals`, `frame.f_lineno`),
`callback`, `step` and `virtual_time`. Nothing runs while the debugger is
open: the world is frozen. While it is open (`debugging`), file calls reach
the real file system, not the node's simulated disk: the debugger's own
files (its history, `.pdbrc`, a hook's output) are the user's, not the
program's.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any

from seedbed.errors import UsageError


@dataclass(frozen=True)
class BreakAt:
    step: int | None = None
    time_ns: int | None = None


_pending: list[BreakAt] = []  # the CLI's request, for the loops made while it stands
debugging = False  # the debugger is open (`seedbed.fs` then serves no node's files)


def parse(text: str) -> BreakAt:
    """`--break-at` text: a whole number is a step, `2.5` or `2.5s` a virtual time."""
    value = text.strip()
    if value.isdigit():
        if int(value) >= 1:
            return BreakAt(step=int(value))
    else:
        try:
            seconds = float(value.removesuffix("s"))
        except ValueError:
            seconds = -1.0
        if 0 <= seconds < 1e9:  # NaN and infinity fail the comparison
            return BreakAt(time_ns=round(seconds * 1_000_000_000))
    raise UsageError(
        "--break-at must be a step (a whole number >= 1) or a virtual time in seconds "
        f"(like 2.5 or 2.5s), got {text!r}"
    )


def request(point: BreakAt | None) -> None:
    _pending.clear()
    if point is not None:
        _pending.append(point)


def pending() -> BreakAt | None:
    return _pending[0] if _pending else None


_LIBRARY_DIRS = (os.path.dirname(asyncio.__file__), os.path.dirname(os.path.dirname(__file__)))


def _user_frame(task: Any) -> Any:
    """The innermost frame of the task's await chain outside asyncio and seedbed."""
    coro = task.get_coro() if task is not None else None
    found = None
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        if not coro.cr_frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
            found = coro.cr_frame
        coro = getattr(coro, "cr_await", None)
    return found


def stop_here(handle: Any, step: int, now_ns: int) -> None:
    """Open the debugger; called inside the context of `handle`, about to run."""
    from seedbed._core.identity import current_node
    from seedbed._core.printable import terminal
    from seedbed.aio._explore import task_of

    # One stop per command: a scenario runs its failing seed again to build the
    # failure report, and that loop must not open the debugger a second time.
    _pending.clear()
    callback = handle._callback
    task = task_of(handle)
    frame = _user_frame(task)  # noqa: F841 (for the debugger: its locals)
    node = current_node()
    virtual_time = now_ns / 1_000_000_000
    print(
        terminal(  # a node's name and a callback's repr are the program's text
            f"seedbed: stopped before step {step} at t={virtual_time:.6f}s"
            f" on {node or 'the world'}: {callback!r}"
        )
    )
    global debugging
    debugging = True
    try:
        breakpoint()  # locals: node, task, frame, callback, step, virtual_time
    finally:
        debugging = False
