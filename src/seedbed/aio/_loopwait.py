"""The loop's own thread blocked on a simulated thread (a lock a thread holds).

A coroutine that takes a `threading.Lock` a thread holds blocks the real
loop's thread until the thread lets go: no task, no callback and no timer of
the loop runs meanwhile, while the other threads go on. `block_loop` does
exactly that inside the callback that blocked: it runs thread segments (the
seed picks among the ready ones) and, when none is ready, moves virtual time
to the next timer that wakes a thread, leaving the loop's own timers in the
heap, late, as a blocked loop leaves them. When no thread is ready and none
waits on a timer, nothing can ever release the lock: the run ends in a
`Deadlock` naming the holder and every blocked thread.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify
from typing import Any

from seedbed._core.contract import require
from seedbed.aio import _threadlanes
from seedbed.aio._diagnose import deadlock_error


def block_loop(
    lanes: _threadlanes.ThreadLanes, busy: Callable[[], bool], what: str, deadline: int | None
) -> bool:
    """Run threads until `busy()` is false (True) or virtual time reaches
    `deadline` (False, a timeout); raise the run's `Deadlock` if it never can be."""
    st = lanes.st
    while busy():
        if deadline is not None and st.clock.now >= deadline:
            return False
        if lanes.can_run():
            _threadlanes.run_turn(lanes, False)
            if st.failure is not None:
                raise lanes.loop._failure_to_raise()
            continue
        if not _wake_next_thread(lanes, deadline):
            lines = [f"    the event loop's thread waits for {what}", *lanes.describe()]
            failure = deadlock_error(st, lines)
            lanes.loop._record_failure(failure)
            raise failure
    return True


def _wake_next_thread(lanes: _threadlanes.ThreadLanes, deadline: int | None) -> bool:
    """Move time to the soonest timer that wakes a thread and fire it (False: none)."""
    st = lanes.st
    entries = [entry for entry in st.timers if _wakes_thread(entry[2])]
    if not entries:
        return deadline is not None and _advance(lanes, deadline)
    entry = min(entries, key=lambda e: (e[0], e[1]))
    if deadline is not None and entry[0] > deadline:
        return _advance(lanes, deadline)
    st.timers.remove(entry)
    heapify(st.timers)
    handle = entry[2]
    handle._scheduled = False
    _advance(lanes, entry[0])
    handle._callback(*handle._args)
    return True


def _advance(lanes: _threadlanes.ThreadLanes, when: int) -> bool:
    st = lanes.st
    if when > st.clock.now:
        st.clock.advance_to(when)
        st.trace.time(st.clock.now, st.steps)
    require(st.clock.now >= when, "a blocked loop's clock reaches the thread's timer")
    return True


def _wakes_thread(handle: Any) -> bool:
    callback = handle._callback
    return not handle._cancelled and getattr(callback, "__func__", None) is _TIMED_OUT


_TIMED_OUT = _threadlanes.ThreadLanes._timed_out
