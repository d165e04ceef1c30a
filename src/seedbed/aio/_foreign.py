"""Real threads calling into a standalone loop, in lockstep (a portal).

A test client runs the app's loop in a worker thread of its own (anyio's
`BlockingPortal`: Starlette's `TestClient`), and the test's thread calls in
with `call_soon_threadsafe` and blocks until the answer. Stock asyncio lets
the two run at once; here that would make where a call lands depend on real
timing. So the loop and the threads that call it take turns:

- a call from another thread while the loop runs is queued in an inbox, and
  the loop takes the inbox only when it has nothing ready (`settle`);
- with nothing ready, before virtual time moves on, the loop waits (real
  time) until every thread that ever called in either calls again or waits:
  a thread in a `threading` wait (a future's result, an event) is waiting
  for the loop. When the loop notifies the condition a caller waits on, the
  caller is busy again at once, so the loop never races ahead of it.

So the loop runs only while its callers wait, and they run only while it is
idle: the order of events is the program's, never the machine's. A caller
that neither calls nor waits for `PATIENCE` seconds is given up on (the run
goes on as before: timers, or the escape that names the thread) and is not
waited for again by that loop. A loop on the main thread waits only for
threads that called in (and for any, when it has nothing else to do); a
loop off the main thread (a portal) waits for every non-daemon thread.
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seedbed.aio import _interpose

if TYPE_CHECKING:
    from seedbed.aio.loop import SeedbedLoop

PATIENCE = 10.0  # real seconds a loop waits for a caller that neither calls nor waits
_POLL = 0.0002
_real_get_ident = _thread.get_ident
# The real clock and sleep, read through the providers that keep them (a run
# rebinds copies held in other modules' globals, this one's included).


def _real_monotonic() -> float:
    return float(_interpose._real_monotonic())


_real_allocate = _thread.allocate_lock  # captured at import: a run replaces the attribute
_NAP = _real_allocate()
_NAP.acquire()


def _real_sleep(seconds: float) -> None:
    """Wait `seconds` of real time on a held lock: not `time.sleep`, which 3.13
    audits (an escape on the run's thread), and out of every run's reach."""
    _NAP.acquire(timeout=seconds)


# The watches of loops running now, and what each foreign thread waits on.
_running: list[ForeignWatch] = []


class ForeignWatch:
    """One standalone loop's inbox and its callers (see the module docstring)."""

    __slots__ = ("callers", "ignored", "inbox", "loop", "mutex", "waiting")

    def __init__(self, loop: SeedbedLoop) -> None:
        self.loop = loop
        self.mutex = _real_allocate()  # a real lock: callers are real threads
        self.inbox: list[Any] = []
        self.callers: dict[int, None] = {}  # idents, in the order they first called
        self.waiting: dict[int, Any] = {}  # ident -> the condition it waits on
        self.ignored: set[int] = set()  # threads that outwaited `PATIENCE`: not waited for again

    def post(self, handle: Any) -> None:
        """A foreign thread's `call_soon_threadsafe`: queued until the loop settles."""
        with self.mutex:
            self.inbox.append(handle)
            self.callers.setdefault(_real_get_ident(), None)

    def settle(self, idle: bool) -> bool:
        """Nothing is ready: take what callers posted (True), or wait until every
        caller waits too (False: the loop may move time on). With `idle` (no timer
        either), threads that have not called yet count as callers."""
        began = _real_monotonic()
        while True:
            with self.mutex:
                if self.inbox:
                    taken, self.inbox = self.inbox, []
                    self._queue(taken)
                    return True
                busy = [ident for ident in self._callers(idle) if ident not in self.waiting]
            if not busy:
                return False
            if _real_monotonic() - began > PATIENCE:
                self.ignored.update(busy)
                return False
            _real_sleep(_POLL)

    def _callers(self, idle: bool) -> list[int]:
        """Threads the loop waits for: those that called in; and every other
        non-daemon thread when the loop is stuck without them (`idle`) or runs
        off the main thread (a portal: the main thread is about to call in)."""
        threads = threading.enumerate()
        alive = {thread.ident for thread in threads if thread.is_alive()}
        me = _real_get_ident()
        callers = [
            ident for ident in self.callers if ident in alive and ident != me
            and ident not in self.ignored
        ]  # fmt: skip
        if idle or threading.main_thread().ident != me:
            callers += [
                thread.ident
                for thread in threads
                if thread.ident not in self.callers and thread.ident != me and not thread.daemon
                and thread.ident is not None and thread.ident not in self.ignored
            ]  # fmt: skip
        return callers

    def _queue(self, taken: list[Any]) -> None:
        st = self.loop._st
        for handle in taken:
            handle.cause = st.steps
            st.ready.append(handle)
        st.trace.emit("foreign calls", len(taken))


def start(watch: ForeignWatch) -> None:
    _running.append(watch)


def stop(watch: ForeignWatch) -> None:
    if watch in _running:
        _running.remove(watch)


def waits(condition: Any) -> Callable[[], None] | None:
    """A foreign thread is about to wait on `condition`: mark it waiting for every
    running watch; returns the undo (None when no watch runs)."""
    if not _running:
        return None
    ident = _real_get_ident()
    watches = [w for w in _running if w.loop._st.thread != ident]
    for watch in watches:
        with watch.mutex:
            watch.waiting[ident] = condition

    def done() -> None:
        for watch in watches:
            with watch.mutex:
                if watch.waiting.get(ident) is condition:
                    del watch.waiting[ident]

    return done


def notified(condition: Any) -> None:
    """`condition` is notified: the threads waiting on it are busy again, now."""
    for watch in _running:
        with watch.mutex:
            for ident in [i for i, c in watch.waiting.items() if c is condition]:
                del watch.waiting[ident]
