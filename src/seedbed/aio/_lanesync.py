"""The blocking points of simulated threads: a lock and a sleep.

Inside a run with thread lanes, `threading.Lock()` (and `_thread.allocate_lock`)
makes a `LaneLock`. Everything else in `threading`, `queue` and
`concurrent.futures` is Python built on that lock: `RLock` (the Python one),
`Condition` (its waiters are locks acquired twice), `Event`, `Semaphore`,
`Barrier`, `queue.Queue`, `Future.result()`. So one lock that parks the
calling lane instead of the OS thread makes all of them switch lanes, with
their timeouts on virtual time.

A lock is not fair, as a real one is not: a release wakes the first waiter,
which tries again when it runs, and a thread that runs first may take the
lock. Before every blocking acquire the thread yields once (a drawn switch
point), so a thread's check-then-act interleaves with coroutines and other
threads even where it never has to wait.

The loop's own code (a coroutine, a callback) that finds a lock held by a
thread blocks the loop, as it would block the real loop's thread: until the
lock is free only threads run (`_loopwait`), and virtual time moves on to
their timers while every task and the loop's own timers wait. If no thread
can ever release it, the run ends in a `Deadlock` naming the holder.
"""

from __future__ import annotations

import math
from typing import Any

from seedbed._core.contract import require
from seedbed.aio import _loopwait, _threadlanes

_NS = 1_000_000_000
#: A sleeping thread wakes up to this late (drawn per sleep), as an OS thread
#: does: how long a blocking call takes is the seed's choice too, so a
#: thread's act after a sleep can land before or after a coroutine's timer.
SLEEP_LATE_NS = 1_000_000
LATE_NS = 1_000  # see `_wait_ns`


class LaneLock:
    """`threading.Lock` for simulated threads (see the module docstring)."""

    __slots__ = ("__weakref__", "_locked", "_waiters", "holder", "number")

    def __init__(self) -> None:
        lanes = _threadlanes.active()
        if lanes is not None:
            lanes.locks += 1
        self.number = lanes.locks if lanes is not None else 0
        self._locked = False
        self._waiters: list[_threadlanes.ThreadLane] = []
        self.holder: Any = None  # the lane that took it, or "loop"

    def __repr__(self) -> str:
        state = "locked" if self._locked else "unlocked"
        return f"<{state} seedbed lock #{self.number}>"

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not blocking and timeout != -1:
            raise ValueError("can't specify a timeout for a non-blocking call")
        if timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be a non-negative number")
        lane = _threadlanes.current()
        lanes = _threadlanes.active()
        if blocking and lane is not None and lanes is not None:
            lanes.yield_now(lane, f"before acquiring lock #{self.number}")
        if not self._locked:
            self._take(lane)
            return True
        if not blocking:
            return False
        if lane is None or lanes is None:
            return self._loop_waits(lanes, timeout)
        return self._wait(lanes, lane, None if timeout == -1 else int(timeout * _NS))

    def _take(self, lane: _threadlanes.ThreadLane | None) -> None:
        self._locked = True
        if lane is None:
            self.holder = "loop"
        else:
            self.holder = lane
            lane.held += 1

    def _wait(
        self, lanes: _threadlanes.ThreadLanes, lane: _threadlanes.ThreadLane, timeout_ns: int | None
    ) -> bool:
        deadline = None if timeout_ns is None else lanes.st.clock.now + timeout_ns
        while self._locked:
            now = lanes.st.clock.now
            if deadline is not None and now >= deadline:
                return False
            self._waiters.append(lane)
            left = None if deadline is None else deadline - now
            lanes.park(lane, f"acquiring lock #{self.number}", self, left)
            if lane in self._waiters:
                self._waiters.remove(lane)
        self._take(lane)
        return True

    def _loop_waits(self, lanes: _threadlanes.ThreadLanes | None, timeout: float) -> bool:
        if timeout == 0:
            return False
        holder = _threadlanes.describe_holder(self.holder)
        if lanes is None:
            raise RuntimeError(
                f"seedbed lock #{self.number} is held by {holder}, which no longer runs "
                "(the lock was made inside a simulated run): waiting would never end"
            )
        what = f"lock #{self.number} held by {holder}"
        if self.holder == "loop":  # a Condition's waiter: only a notify releases it
            what = "a notify (a Condition, Event, Queue or Future wait)"
        deadline = None if timeout == -1 else lanes.st.clock.now + _wait_ns(timeout)
        if not _loopwait.block_loop(lanes, self.locked, what, deadline):
            return False
        self._take(None)
        return True

    __enter__ = acquire
    acquire_lock = acquire

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("release unlocked lock")
        self._locked = False
        holder, self.holder = self.holder, None
        if isinstance(holder, _threadlanes.ThreadLane):
            holder.held -= 1
        if self._waiters:
            lanes = _threadlanes.active()
            first = self._waiters.pop(0)
            if lanes is not None:
                lanes.wake(first)

    release_lock = release

    def locked(self) -> bool:
        return self._locked

    locked_lock = locked

    def _at_fork_reinit(self) -> None:
        self._locked = False
        self.holder = None
        self._waiters.clear()


def _wait_ns(timeout: float) -> int:
    """A timed wait's length on the loop's thread: rounded up, plus `LATE_NS`
    (a timed-out wait returns a little late, as a real one does), so a caller
    that loops until its own float deadline (as `concurrent.futures.as_completed`
    does) finds it passed, and never spins at a frozen instant."""
    return math.ceil(timeout * _NS) + LATE_NS


def sleep(lanes: _threadlanes.ThreadLanes, lane: _threadlanes.ThreadLane, seconds: float) -> None:
    """`time.sleep` in a simulated thread: park it for `seconds` of virtual time,
    and up to `SLEEP_LATE_NS` more (drawn)."""
    if seconds != seconds:
        raise ValueError("Invalid value NaN (not a number)")
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    if seconds == 0:
        lanes.yield_now(lane, "time.sleep(0)")
        return
    late = lanes.st.sched.below(SLEEP_LATE_NS + 1, "how late a sleeping thread wakes")
    timed_out = not lanes.park(lane, f"time.sleep({seconds!r})", None, int(seconds * _NS) + late)
    require(timed_out, "a sleeping thread wakes by its timer")
