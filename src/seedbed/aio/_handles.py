"""Lean handles, and tasks whose hash is their creation number.

The handles subclass asyncio's, so `isinstance` checks and `cancel()` keep
working, but skip `Handle.__init__` (which asks the loop for its debug flag on
every call): a callback's cost is mostly its handle.

Tasks hash by creation number, not by address: the `done` and `pending` sets
that `asyncio.wait` returns then iterate in an order fixed by the program,
not by where the allocator put each task.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import sys
from collections.abc import Callable
from typing import Any

from seedbed.aio._diagnose import cancel_site

_TASKGROUPS = os.path.join("asyncio", "taskgroups.py")


class SimHandle(asyncio.Handle):
    """A `call_soon` callback.

    Every task step costs one of these. The two fields asyncio only writes in
    debug mode are class-level defaults here, which saves their stores; the
    one place asyncio writes `_repr` (`cancel` in debug mode) is overridden.
    `cause` is the step number of the callback that scheduled it: task steps
    with one cause resume in the order it scheduled them, as on every real
    loop (see `_explore`).
    """

    __slots__ = ("cause",)
    _source_traceback = None
    _repr = None

    def __init__(
        self,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
        context: contextvars.Context,
    ) -> None:
        self._callback = callback
        self._args = args
        self._cancelled = False
        self._loop = loop
        self._context = context
        self.cause = -1  # made outside call_soon: no scheduling callback known

    def cancel(self) -> None:
        if not self._cancelled:
            self._cancelled = True
            self._callback = None  # type: ignore[assignment]
            self._args = None  # type: ignore[assignment]


class SimTimerHandle(asyncio.TimerHandle):
    """A `call_later`/`call_at` callback; `when_ns` is its deadline in the heap."""

    __slots__ = ("when_ns",)
    _source_traceback = None  # debug-only fields: class defaults, as in SimHandle
    _repr = None
    cause = -1  # a timer's callback has no scheduling callback in its batch (see _explore)

    def __init__(
        self,
        when_ns: int,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
        context: contextvars.Context,
    ) -> None:
        self._callback = callback
        self._args = args
        self._cancelled = False
        self._loop = loop
        self._context = context
        self._scheduled = True  # created only to go straight into the heap
        self._when = when_ns / 1e9
        self.when_ns = when_ns

    def __hash__(self) -> int:
        return hash(self.when_ns)

    def cancel(self) -> None:
        """As `TimerHandle.cancel`, minus the debug bookkeeping on the hot path.

        `asyncio.sleep` cancels its timer in a `finally` even after it fired.
        """
        if not self._cancelled:
            self._cancelled = True
            if self._scheduled:
                self._loop._timer_handle_cancelled(self)  # type: ignore[attr-defined]
            self._callback = None  # type: ignore[assignment]
            self._args = None  # type: ignore[assignment]


class SimFuture(asyncio.Future[Any]):
    """A loop future that hashes by a number its loop gives it when first hashed.

    A set of plain futures iterates in memory order, which depends on what ran
    before in the process: aiohttp's client wakes the requests waiting on one
    DNS lookup by iterating such a set, so on 3.11 (where that lookup is not an
    eager task) one seed gave other results after other seeds. Numbered at
    their first hash, futures iterate in the order the program first put them
    in a set or dict. Only 3.11's loop makes them (see `SeedbedLoop`): a C
    task takes its fast path for exact futures only, so each await on one
    costs more.
    """

    __slots__ = ("number",)
    number: int

    def __hash__(self) -> int:
        try:
            return self.number
        except AttributeError:
            loop: Any = self.get_loop()
            number: int = next(loop._future_numbers)
            self.number = number
            return number


class SimTask(asyncio.Task[Any]):
    """A task that hashes by creation number and knows who cancelled it."""

    __slots__ = ("cancel_site", "lane", "number", "user_cancels")
    number: int
    user_cancels: int
    cancel_site: tuple[str, Any]  # set at the first counted cancel (see _diagnose)
    lane: Any  # the lane (a world's node incarnation) it was created in, or None

    def __hash__(self) -> int:
        return self.number

    def cancel(self, msg: Any | None = None) -> bool:
        """Count cancellations requested by anything but a TaskGroup.

        On CPython before 3.13 a TaskGroup whose child fails cancels its parent
        and never uncancels it (gh-116720): the parent's `cancelling()` stays at
        1 through no fault of its own. Only the requests counted here can make
        a task guilty of swallowing its cancellation.
        """
        if not sys._getframe(1).f_code.co_filename.endswith(_TASKGROUPS):
            self.user_cancels += 1
            if self.user_cancels == 1 and not self.done():  # where a swallow would happen
                self.cancel_site = cancel_site(self)
        return super().cancel(msg)


# Reprs and asyncio's own reports name the class ("<Task pending ...>", "Task
# exception was never retrieved", "<TimerHandle when=...>"): stock's names, which a
# suite's tests and log filters match, not the subclasses' (issue 42: stock parity).
SimHandle.__name__ = "Handle"
SimTimerHandle.__name__ = "TimerHandle"
SimFuture.__name__ = "Future"
SimTask.__name__ = "Task"
