"""The least a virtual-time event loop can do: the floor for `sleep(x)` workloads.

A heap of timers, a ready queue, a float clock that jumps to the next timer,
stock asyncio handles, and nothing else: no seeded ties, no CPU costs, no
trace, no budgets, no deadlock reports, no lanes. Whatever seedbed's loop
costs above this is the price of those; whatever this costs is the price of
keeping `asyncio.sleep`'s semantics in Python at all. Benchmarks only.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from heapq import heappop, heappush
from itertools import count
from typing import Any


class MinimalLoop(asyncio.AbstractEventLoop):
    """Runs `run_until_complete` on virtual time; the rest of the API is absent."""

    def __init__(self) -> None:
        self._now = 0.0
        self._ready: deque[asyncio.Handle] = deque()
        self._timers: list[tuple[float, int, asyncio.TimerHandle]] = []
        self._numbers = count()
        self._stopping = False
        self._closed = False

    def time(self) -> float:
        return self._now

    def call_soon(self, callback: Callable[..., object], *args: Any,
                  context: contextvars.Context | None = None) -> asyncio.Handle:  # fmt: skip
        handle = asyncio.Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    def call_later(self, delay: float, callback: Callable[..., object], *args: Any,
                   context: contextvars.Context | None = None) -> asyncio.TimerHandle:  # fmt: skip
        return self.call_at(self._now + delay, callback, *args, context=context)

    def call_at(self, when: float, callback: Callable[..., object], *args: Any,
                context: contextvars.Context | None = None) -> asyncio.TimerHandle:  # fmt: skip
        handle = asyncio.TimerHandle(when, callback, args, self, context)
        heappush(self._timers, (when, next(self._numbers), handle))
        handle._scheduled = True  # type: ignore[attr-defined]
        return handle

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        pass  # cancelled timers stay in the heap and are skipped when due

    def create_future(self) -> asyncio.Future[Any]:
        return asyncio.Future(loop=self)

    def create_task(self, coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
                    **kwargs: Any) -> asyncio.Task[Any]:  # fmt: skip
        return asyncio.Task(coro, loop=self, **kwargs)

    def get_debug(self) -> bool:
        return False

    def is_running(self) -> bool:
        return not self._stopping

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        raise RuntimeError(context.get("message"))

    def run_until_complete(self, future: Any) -> Any:
        task = asyncio.ensure_future(future, loop=self)
        task.add_done_callback(lambda _: setattr(self, "_stopping", True))
        self._stopping = False
        asyncio.events._set_running_loop(self)
        try:
            self._drive()
        finally:
            asyncio.events._set_running_loop(None)
        return task.result()

    def _drive(self) -> None:
        ready, timers = self._ready, self._timers
        while not self._stopping:
            if not ready:
                if not timers:
                    raise RuntimeError("deadlock")
                self._now = max(self._now, timers[0][0])
            while timers and timers[0][0] <= self._now:
                handle = heappop(timers)[2]
                handle._scheduled = False  # type: ignore[attr-defined]
                if not handle.cancelled():
                    ready.append(handle)
            for _ in range(len(ready)):
                handle = ready.popleft()
                if not handle.cancelled():
                    handle._run()
