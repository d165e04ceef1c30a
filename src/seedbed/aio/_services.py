"""The loop's services beyond scheduling: executors, async generators, errors, debug.

Executors, with `threads="lanes"` (the default): inside a run,
`run_in_executor` submits to a `ThreadPoolExecutor`, whose workers are
simulated threads (`_threadlanes`); the default executor is one per node
incarnation, as each process has its own, made at its first use. Before a run
(the loop is not running, no lane can), and always with `threads="inline"`,
the function runs at once on the loop's thread and the future is done.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar, TypeVarTuple, Unpack

from seedbed._core.contract import require
from seedbed.aio import _blocking, _signals, _threadlanes
from seedbed.aio._fold import Echoes
from seedbed.aio._handles import SimHandle
from seedbed.aio._io import IOMethods
from seedbed.aio._state import LoopState
from seedbed.errors import SimulationFailure

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
_logger = logging.getLogger("seedbed")


class _Shutdown:
    """An executor of one: the thread that shuts a default executor down (asyncio
    starts one for it too, since the executor's own workers cannot)."""

    def submit(self, func: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def work() -> None:
            # As a pool's worker: only `func`'s own error goes to the future. What
            # `set_result`'s callbacks raise (a lane ended at the loop's close, in
            # its `call_soon_threadsafe`) is the thread's, not a second outcome.
            try:
                result = func(*args)
            except BaseException as exc:  # handed to the awaiting task, as a pool does
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name="asyncio-shutdown", daemon=True).start()
        return future


class LoopServices(IOMethods):
    """The non-scheduling half of `SeedbedLoop`."""

    _executors: dict[Any, Any]  # node incarnation (None: no world) -> its default executor

    _st: LoopState
    _echoes: Echoes
    _exception_handler: Any
    _debug: bool
    _signal_handlers: dict[int, SimHandle]
    _closed: bool

    @property
    def seed(self) -> int:
        return self._st.entropy.seed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("Event loop is closed")

    def _record_failure(self, failure: SimulationFailure) -> None:
        """Keep the run's first failure; `SeedbedLoop` stamps it with the run context."""
        raise NotImplementedError

    # -- executors run inline -----------------------------------------------

    def run_in_executor(
        self, executor: Any, func: Callable[[Unpack[Ts]], T], *args: *Ts
    ) -> asyncio.Future[T]:
        """`func(*args)` on a simulated thread; inline when lanes cannot run (see above)."""
        self._check_open()
        st = self._st
        if st.running and st.config.threads == "lanes" and _threadlanes.active() is not None:
            if executor is None:
                executor = self._node_executor()
            return asyncio.wrap_future(executor.submit(func, *args), loop=self)
        return self._run_inline(func, *args)

    def _node_executor(self) -> concurrent.futures.ThreadPoolExecutor:
        """The default executor of the running node (or of the loop, outside a world)."""
        lane_var = self._st.lane_var
        node = lane_var.get() if lane_var is not None else None
        executor = self._executors.get(node)
        if executor is None:
            if self._default_executor is not None and node is None:
                executor = self._default_executor
            else:  # as asyncio's own: workers named asyncio_0, asyncio_1...
                executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="asyncio")
            self._executors[node] = executor
        return executor

    def _run_inline(self, func: Callable[[Unpack[Ts]], T], *args: *Ts) -> asyncio.Future[T]:
        """Run `func(*args)` now, on this thread; return an already-done future."""
        future: asyncio.Future[T] = self.create_future()
        steps = self._st.steps
        try:
            if self._st.running:
                future.set_result(func(*args))
            else:  # before a run: its blocking waits are refused too (see `_blocking`)
                with _blocking.inline(self):
                    future.set_result(func(*args))
        except (SystemExit, KeyboardInterrupt):
            raise
        except SimulationFailure as failure:
            self._record_failure(failure)
            future.set_exception(failure)
        except BaseException as exc:
            future.set_exception(exc)
        require(self._st.steps == steps, "an inline executor job runs inside one step")
        require(future.done(), "an inline executor job is done when it returns")
        return future

    def set_default_executor(self, executor: Any) -> None:
        """The executor `run_in_executor(None, ...)` uses outside a world's nodes."""
        self._default_executor = executor
        self._executors.pop(None, None)

    # -- BaseEventLoop's private attributes, for helpers that read them -------
    # Test helpers of other projects poke at these on every `BaseEventLoop`;
    # each means here what it means there, read from the simulation's state.

    _default_executor: Any = None
    slow_callback_duration: float = 0.1  # read by debug-mode helpers; no wall time passes
    _clock_resolution: float = 1e-9  # the virtual clock counts nanoseconds

    @property
    def _ready(self) -> Any:
        """The ready queue itself (a deque of handles), as asyncio's."""
        return self._st.ready

    @property
    def _scheduled(self) -> list[asyncio.TimerHandle]:
        """The pending timer handles, soonest first (a snapshot of the heap)."""
        return [entry[2] for entry in sorted(self._st.timers, key=lambda e: (e[0], e[1]))]

    @property
    def _stopping(self) -> bool:
        return self._st.stopping

    @property
    def _thread_id(self) -> int | None:
        """The running thread's id while the loop runs, else None (as asyncio)."""
        return self._st.thread if self._st.running else None

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        """Shut the default executors down from a simulated thread, as asyncio does
        from a real one (their idle workers end); nothing to do inline."""
        executors = [self._executors.pop(key) for key in list(self._executors)]
        for executor in executors:
            if _threadlanes.active() is None:
                break
            await self.run_in_executor(_Shutdown(), executor.shutdown, True)

    # -- async generators ---------------------------------------------------

    def _asyncgen_firstiter(self, agen: Any) -> None:
        self._st.asyncgens.started(agen)

    def _asyncgen_finalizer(self, agen: Any) -> None:
        context = self._st.asyncgens.owner_context(agen)
        if self._closed:
            return
        # `aclose()` is made when the callback runs, not now: the run's closing
        # collection (`_collect`) finalizes generators after the last batch,
        # and a loop closed before running again would drop a coroutine made
        # here unawaited ("coroutine method 'aclose' was never awaited", which
        # stock asyncio, collecting later, never shows). The trace is the same.
        self.call_soon(self._close_asyncgen, agen, context=context)

    def _close_asyncgen(self, agen: Any) -> None:
        self.create_task(agen.aclose())

    async def shutdown_asyncgens(self) -> None:
        """Close the async generators still open, each in its owner's context."""
        owned = self._st.asyncgens.take_all()
        require(not self._st.asyncgens.take_all(), "open async generators are closed once")
        if not owned:
            return
        closing = [self.create_task(agen.aclose(), context=context) for agen, context in owned]
        results = await asyncio.gather(*closing, return_exceptions=True)
        for (agen, _), result in zip(owned, results, strict=True):
            if isinstance(result, Exception):
                self.call_exception_handler(
                    {
                        "message": f"an error occurred during closing of {agen!r}",
                        "exception": result,
                        "asyncgen": agen,
                    }
                )

    # -- errors and debug ---------------------------------------------------

    def get_exception_handler(self) -> Any:
        return self._exception_handler

    def set_exception_handler(self, handler: Any) -> None:
        self._exception_handler = handler

    def note_failure(self, failure: BaseException) -> None:
        """The run failed with `failure`: the reports of its echoes (the tasks it
        left failed the same way, collected later) are folded, not logged."""
        self._echoes.failed(failure)

    def default_exception_handler(self, context: dict[str, Any]) -> None:
        """Log the report once: echoes of the run's failure, and repeats of a report
        already logged, are folded into a count (`_fold`)."""
        if not self._echoes.should_log(context):
            return
        message = context.get("message") or "Unhandled exception in event loop"
        exception = context.get("exception")
        exc_info = (type(exception), exception, exception.__traceback__) if exception else None
        _logger.error("%s (seed=%d)", message, self.seed, exc_info=exc_info)

    def call_exception_handler(self, context: dict[str, Any]) -> None:
        if self._exception_handler is None:
            self.default_exception_handler(context)
            return
        try:
            self._exception_handler(self, context)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException:
            _logger.exception("the exception handler itself failed (seed=%d)", self.seed)

    def get_debug(self) -> bool:
        return self._debug

    @staticmethod
    def debug_by_default() -> bool:
        """Whether a new loop starts in debug mode: as stock asyncio decides it.

        `python -X dev`, or `PYTHONASYNCIODEBUG` set to anything non-empty
        (unless `python -E` ignores the environment). Debug mode changes what
        asyncio records and logs (where futures and coroutines were created),
        never the order anything runs in, so a run's trace is the same either way.
        """
        if sys.flags.dev_mode:
            return True
        return not sys.flags.ignore_environment and bool(os.environ.get("PYTHONASYNCIODEBUG"))

    def set_debug(self, enabled: bool) -> None:
        self._debug = enabled
        # C futures ask the loop for its debug flag each time one is created; a
        # bound builtin answers without the cost of a Python frame.
        self.get_debug = bool(enabled).__bool__  # type: ignore[method-assign]

    # -- signals: installed as stock installs them (see `_signals`) ------------

    def add_signal_handler(
        self, sig: int, callback: Callable[[Unpack[Ts]], object], *args: *Ts
    ) -> None:
        self._check_open()
        _signals.check_signal(sig, callback)
        self._signal_handlers[sig] = SimHandle(callback, args, self, contextvars.copy_context())
        try:
            _signals.install(sig, self._signal_arrived)
        except BaseException:
            del self._signal_handlers[sig]
            raise

    def _signal_arrived(self, sig: int, frame: Any) -> None:
        """The real (or simulated) handler: queue the callback, as stock's wakeup does."""
        handle = self._signal_handlers.get(sig)
        if handle is None or self._closed:
            return
        if handle._cancelled:
            self.remove_signal_handler(sig)
            return
        self.call_soon(handle._callback, *handle._args, context=handle._context)

    def remove_signal_handler(self, sig: int) -> bool:
        if self._signal_handlers.pop(sig, None) is None:
            return False
        _signals.uninstall(sig)
        return True

    def _remove_signal_handlers(self) -> None:
        """At `close()`, as stock: every handler this loop installed goes."""
        for sig in list(self._signal_handlers):
            self.remove_signal_handler(sig)

    # -- I/O: served by a simulated world, refused without one ---------------
