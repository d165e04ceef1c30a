"""Where tasks wait: the evidence a deadlock report needs.

A task suspended on `await queue.get()` is waiting inside asyncio, but the
user needs the line of *their* code that awaited. We walk the chain of awaited
coroutines and report the innermost frame outside asyncio (and the asyncio
frame below it, for context).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any

from seedbed.errors import BudgetExceeded, Deadlock

if TYPE_CHECKING:
    from seedbed.aio._state import LoopState

_ASYNCIO_DIR = os.path.dirname(asyncio.__file__)
# seedbed's own frames (a simulated server's serve_forever...) are not where the
# user's code waits either.
_SEEDBED_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_DIRS = (_ASYNCIO_DIR, _SEEDBED_DIR)


def _frames(awaitable: Any) -> list[FrameType]:
    """The frames of a coroutine and everything it awaits, outermost first."""
    frames: list[FrameType] = []
    seen = 0
    while awaitable is not None and seen < 100:
        seen += 1
        frame = (
            getattr(awaitable, "cr_frame", None)
            or getattr(awaitable, "gi_frame", None)
            or getattr(awaitable, "ag_frame", None)
        )
        if frame is not None:
            frames.append(frame)
        awaitable = (
            getattr(awaitable, "cr_await", None)
            or getattr(awaitable, "gi_yieldfrom", None)
            or getattr(awaitable, "ag_await", None)
        )
    return frames


def _where(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"


def waiting_at(task: asyncio.Task[Any]) -> str:
    """'file:line in function' of the user code where `task` is suspended."""
    frames = _frames(task.get_coro())
    if not frames:
        return "(not started or already finished)"
    user = [f for f in frames if not f.f_code.co_filename.startswith(_LIBRARY_DIRS)]
    inner = frames[-1]
    if not user:
        return _where(inner)
    text = _where(user[-1])
    if inner is not user[-1]:
        text += f" (inside {_library(inner)}: {os.path.basename(inner.f_code.co_filename)}"
        text += f":{inner.f_lineno} {inner.f_code.co_name})"
    return text


def _library(frame: FrameType) -> str:
    return "asyncio" if frame.f_code.co_filename.startswith(_ASYNCIO_DIR) else "seedbed"


_ASYNCIO_TASKS = os.path.join(_ASYNCIO_DIR, "tasks.py")


def cancel_site(task: asyncio.Task[Any]) -> tuple[str, Any]:
    """Where `task` waits as a cancellation is requested of it, and the inner
    future of a standard-library `wait_for` that may swallow it (else None).

    CPython 3.11's `asyncio.wait_for` returns the inner result when the
    cancellation arrives just as the inner future finishes (fixed in 3.12):
    the task carries on through no fault of the user's code.
    """
    inner = None
    if sys.version_info < (3, 12):
        for frame in _frames(task.get_coro()):
            code = frame.f_code
            if code.co_name == "wait_for" and code.co_filename == _ASYNCIO_TASKS:
                inner = frame.f_locals.get("fut")
    return waiting_at(task), inner


def swallowed_message(task: asyncio.Task[Any], what: str) -> str | None:
    """The warning for a task that swallowed its cancellation, or None when
    the standard library swallowed it: the `wait_for` it was cancelled in
    got its inner result (had the cancellation gone through, `wait_for`
    would have cancelled the inner future)."""
    where, inner = getattr(task, "cancel_site", None) or ("an unknown place", None)
    if isinstance(inner, asyncio.Future) and inner.done() and not inner.cancelled():
        return None
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", type(coro).__name__)
    node = getattr(getattr(task, "lane", None), "name", None)
    on_node = f", on node {node!r}" if node is not None else ""
    return (
        f"task {task.get_name()!r} {what} (coroutine {name}{on_node}); it was cancelled "
        f"while waiting at {where}. Code awaiting it, asyncio.timeout() and TaskGroup rely "
        "on cancellation propagating: re-raise CancelledError there (or call "
        "task.uncancel() if it is handled on purpose)"
    )


def describe_waiting(tasks: Iterable[asyncio.Task[Any]]) -> str:
    """One line per pending task, in creation order."""
    lines = [f"    {task.get_name()}: waits at {waiting_at(task)}" for task in tasks]
    return "\n".join(lines) if lines else "    (no pending tasks)"


def deadlock_error(st: LoopState, threads: list[str] | None = None) -> Deadlock:
    """Nothing can run and the awaited task is not done: who waits where, tasks
    first, then each blocked simulated thread with what it waits for (`threads`)."""
    pending = [task for task in st.tasks.values() if not task.done()]
    message = (
        "deadlock: the awaited task can never finish; nothing is ready, no timer "
        f"is pending and no checkpoint is parked. {len(pending)} task(s) wait:\n"
        + describe_waiting(pending)
    )
    if threads:
        message += f"\n  {len(threads)} thread(s) are blocked:\n" + "\n".join(threads)
    return Deadlock(message)


def budget_error(st: LoopState, budget: str) -> BudgetExceeded:
    """A spent budget, why, and every task still waiting, with where: a deadlock
    beside a periodic timer spends the time budget while the tasks that matter
    wait forever."""
    pending = [task for task in st.tasks.values() if not task.done()]
    if budget.startswith("max_time=") and st.config.max_time is None:
        budget = f"virtual time limit ({st.time_limit / 1e9:.0f}s, seedbed's horizon)"
        detail = "a timer lies past it: a sleep or timeout that long can never end in a run"
    else:
        detail = _budget_detail(st)
    t = st.clock.now / 1e9
    return BudgetExceeded(
        f"budget {budget} exceeded at step {st.steps}, t={t:.6f}s: {detail}. "
        f"{len(pending)} task(s) wait:\n" + describe_waiting(pending),
        time_advancing=st.last_sleep_step * 2 > st.steps,
    )


def _budget_detail(st: LoopState) -> str:
    """Whether virtual time was still moving (a long run) or not (a livelock)."""
    if st.last_sleep_step * 2 > st.steps:
        return (
            "virtual time was still advancing (the loop last slept on a timer at "
            f"step {st.last_sleep_step}); raise the budget if the run is just long, "
            "or see whether the tasks below wait for something that never comes"
        )
    return (
        f"virtual time stood still since step {st.last_sleep_step}: tasks keep "
        "the loop busy without ever sleeping on a timer (a livelock)"
    )
