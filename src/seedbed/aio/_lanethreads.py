"""`threading` inside a run with thread lanes: what a thread sees of itself.

`install()` (at the start of each stretch of running, with `threads="lanes"`)
replaces, and `restore()` puts back:

- `Thread.start` runs the thread as a lane (`_threadlanes`); `join` and
  `is_alive` of such a thread follow its lane (a join parks the caller);
- `threading.Lock`, `_thread.allocate_lock` make lane locks (`_lanesync`),
  and `threading.RLock` the Python RLock over them; so `Condition`, `Event`,
  `Semaphore`, `Barrier`, `queue.Queue` and `concurrent.futures` switch lanes;
- `queue.SimpleQueue` is the Python one (the C one blocks the OS thread);
- `current_thread`, `get_ident`, `get_native_id` and `threading.local`
  answer per lane: the loop's own code is the thread that runs the loop;
- a thread made in the run hashes by its number, so sets of threads iterate
  in a fixed order (the pool's `shutdown` joins its workers from a set);
- thread names count from 1 in each run (`Thread-1`, `ThreadPoolExecutor-0_0`),
  not from the process's counters, so they never depend on earlier runs.

Each stand-in does the real thing outside a run, in the inline mode, and on
any other OS thread (a Dask worker's comm thread keeps real locks).

Not reachable: locks, `threading.local`s and C `SimpleQueue`s made before the
run are the real ones. A real lock held across a blocking point by one thread
and wanted by another would block the OS thread; such locks are held only in
short sections by the libraries that make them at import (logging's).
"""

from __future__ import annotations

import _thread
import concurrent.futures.thread as futures_thread
import logging
import queue
import sys
import threading
from typing import Any

from seedbed.aio import _lanesync, _loopwait, _threadlanes
from seedbed.aio._threadlanes import DEAD, DONE

_real_get_ident = _thread.get_ident
_real_current_thread = threading.current_thread
_real_start = threading.Thread.start
_real_join = threading.Thread.join
_real_is_alive = threading.Thread.is_alive
_real_adjust = futures_thread.ThreadPoolExecutor._adjust_thread_count
_PySimpleQueue: Any = getattr(queue, "_PySimpleQueue", None)
_owner = 0  # the OS thread of the run the stand-ins serve


def _lanes() -> _threadlanes.ThreadLanes | None:
    """The active run's lanes if the caller is on its OS thread, else None."""
    lanes = _threadlanes.active()
    if lanes is None or _real_get_ident() != _owner:
        return None
    return lanes


# -- identity ------------------------------------------------------------------


def _lane() -> _threadlanes.ThreadLane | None:
    """The simulated thread running now if the caller is on the run's OS thread.

    Another OS thread (the test's thread calling into a portal loop) is itself,
    whichever lane the run's thread is running meanwhile: its RLocks record
    its own ident, or releasing one after the run switched lanes would raise."""
    lane = _threadlanes.current()
    if lane is not None and _real_get_ident() != _owner:
        return None
    return lane


def get_ident() -> int:
    lane = _lane()
    return lane.ident if lane is not None else _real_get_ident()


def current_thread() -> threading.Thread:
    lane = _lane()
    return lane.thread if lane is not None else _real_current_thread()


def _newname(name_template: str = "Thread-%d") -> str:
    lanes = _lanes()
    if lanes is None:
        return _REAL_NEWNAME(name_template)  # type: ignore[no-any-return]
    number = lanes.names.get(name_template, 0) + 1
    lanes.names[name_template] = number
    return name_template % number


_REAL_NEWNAME = threading._newname  # type: ignore[attr-defined]


def allocate_lock() -> Any:
    return _lanesync.LaneLock() if _lanes() is not None else _REAL_ALLOCATE()


_REAL_ALLOCATE = _thread.allocate_lock


class local:
    """`threading.local` per lane: each thread (and the loop's own code) sees its own."""

    __slots__ = ("__dict__", "__weakref__", "_seedbed_args", "_seedbed_dicts")

    def __new__(cls, *args: Any, **kwargs: Any) -> local:
        if (args or kwargs) and cls.__init__ is object.__init__:
            raise TypeError("Initialization arguments are not supported")
        self = object.__new__(cls)
        object.__setattr__(self, "_seedbed_args", (args, kwargs))
        own = object.__getattribute__(self, "__dict__")
        object.__setattr__(self, "_seedbed_dicts", {_local_key(): own})
        return self

    def __getattribute__(self, name: str) -> Any:
        _switch(self)
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        _switch(self)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        _switch(self)
        object.__delattr__(self, name)


def _local_key() -> Any:
    """Whose values a `local` shows: the running lane's, the loop's own code's
    (None), or another OS thread's own (its ident)."""
    ident = _real_get_ident()
    return _threadlanes.current() if ident == _owner else ident


def _switch(obj: local) -> None:
    """Point `obj.__dict__` at the running lane's; a lane's first touch runs `__init__`."""
    dicts = object.__getattribute__(obj, "_seedbed_dicts")
    key = _local_key()
    own = dicts.get(key)
    if own is not None:
        object.__setattr__(obj, "__dict__", own)
        return
    own = dicts[key] = {}
    object.__setattr__(obj, "__dict__", own)
    args, kwargs = object.__getattribute__(obj, "_seedbed_args")
    init = type(obj).__init__
    if init is not object.__init__:
        init(obj, *args, **kwargs)


# -- threads -------------------------------------------------------------------

_real_init = threading.Thread.__init__


def _init(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
    """A thread made inside a run hashes by its number in the run (see `_hash`)."""
    lanes = _lanes()
    if lanes is not None:
        number = lanes.names.get("#thread", 0) + 1
        lanes.names["#thread"] = number
        self._seedbed_hash = number  # type: ignore[attr-defined]
    _real_init(self, *args, **kwargs)


def _hash(self: threading.Thread) -> int:
    """A set of threads iterates in hash order: a pool's `shutdown` joins its
    workers (`self._threads`, a set) in that order, which for the default hash
    follows memory addresses. Installed for good (a hash must not change while
    a thread sits in a set); only threads made inside a run hash differently."""
    number = self.__dict__.get("_seedbed_hash")
    return number if number is not None else object.__hash__(self)


threading.Thread.__hash__ = _hash  # type: ignore[method-assign,assignment]


def _start(self: threading.Thread) -> None:
    lanes = _lanes()
    if lanes is None:
        _real_start(self)
        return
    if not self._initialized:  # type: ignore[attr-defined]
        raise RuntimeError("thread.__init__() not called")
    if self._started.is_set():  # type: ignore[attr-defined]
        raise RuntimeError("threads can only be started once")
    lane = lanes.start(lambda: _bootstrap(self), self)
    self._seedbed_lane = lane  # type: ignore[attr-defined]
    self._ident = self._native_id = lane.ident  # type: ignore[attr-defined]
    self._started.set()  # type: ignore[attr-defined]


def _bootstrap(thread: threading.Thread) -> None:
    """A lane's body: the thread's `run`, its exception to `threading.excepthook`."""
    import greenlet

    try:
        thread.run()
    except SystemExit:
        pass
    except greenlet.GreenletExit:
        raise
    except BaseException:
        lane = getattr(thread, "_seedbed_lane", None)
        if lane is not None and lane.glet is None:
            # Ended at the loop's close (`_threadlanes.kill`): the exit landed
            # where no real thread stops, at the switch before an acquire, so
            # the `with` around it releases a lock it never took again. That
            # error is the exit's doing, not the program's: not reported.
            return
        thread._invoke_excepthook(thread)  # type: ignore[attr-defined]
    finally:
        _stopped(thread)


def _stopped(thread: threading.Thread) -> None:
    """Mark a lane's thread finished for the real `join`/`is_alive` too."""
    if sys.version_info >= (3, 13):  # a handle never started cannot be set done: a new one
        handle = getattr(thread, "_handle", None)
        if handle is not None and not handle.is_done():
            done = _thread._make_thread_handle(thread.ident)  # type: ignore[attr-defined]
            done._set_done()
            thread._handle = done  # type: ignore[attr-defined]
    else:
        thread._is_stopped = True  # type: ignore[attr-defined]
        thread._tstate_lock = None  # type: ignore[attr-defined]


def _join(self: threading.Thread, timeout: float | None = None) -> None:
    lane = getattr(self, "_seedbed_lane", None)
    if lane is None:
        _real_join(self, timeout)
        return
    if lane.state is DONE or lane.state is DEAD:
        return
    me = _threadlanes.current()
    if me is lane:
        raise RuntimeError("cannot join current thread")
    lanes = _lanes()
    if lanes is None:
        raise RuntimeError(
            f"Thread.join() of {self.name!r}: the simulation that ran it has stopped"
        )
    if me is None:  # the loop's own code: the loop blocks while threads run
        deadline = None if timeout is None else lanes.st.clock.now + _ns(timeout)  # type: ignore[operator]
        _loopwait.block_loop(lanes, lambda: _is_alive(self), f"thread {self.name!r}", deadline)
        return
    lane.joiners.append(me)
    lanes.park(me, f"joining thread {self.name!r}", None, _ns(timeout))
    if me in lane.joiners:
        lane.joiners.remove(me)


def _ns(timeout: float | None) -> int | None:
    return None if timeout is None else max(0, int(timeout * 1_000_000_000))


def _is_alive(self: threading.Thread) -> bool:
    lane = getattr(self, "_seedbed_lane", None)
    if lane is None:
        return _real_is_alive(self)
    return lane.state is not DONE and lane.state is not DEAD


_real_submit = futures_thread.ThreadPoolExecutor.submit
_real_shutdown = futures_thread.ThreadPoolExecutor.shutdown


def _submit(self: Any, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
    """A pool made before the run (a module's: asgiref's `sync_to_async` one)
    has a C queue and real locks its lane workers would block the OS thread
    on. Its work in the run goes to a pool made in the run with its settings
    (workers, thread names, initializer), one per run; the pool itself is
    left as it was, for later runs and for other OS threads."""
    lanes = _lanes()
    if (
        lanes is None
        or isinstance(self._work_queue, _PySimpleQueue)
        or self._shutdown
        or self._broken
    ):  # a pool of this run, or none: the real thing (a shut pool raises as it should)
        return _real_submit(self, fn, *args, **kwargs)
    entry = lanes.pools.get(id(self))
    if entry is None:
        stand_in = futures_thread.ThreadPoolExecutor(
            max_workers=self._max_workers,
            thread_name_prefix=self._thread_name_prefix,
            initializer=self._initializer,
            initargs=self._initargs,
        )
        entry = lanes.pools[id(self)] = (self, stand_in)
    return entry[1].submit(fn, *args, **kwargs)


def _shutdown(self: Any, wait: bool = True, *, cancel_futures: bool = False) -> None:
    """Shutting a pool made before the run shuts its stand-in in the run too."""
    lanes = _lanes()
    entry = lanes.pools.get(id(self)) if lanes is not None else None
    if entry is not None:
        entry[1].shutdown(wait=wait, cancel_futures=cancel_futures)
    _real_shutdown(self, wait=wait, cancel_futures=cancel_futures)


class _NoExitRace:
    """`concurrent.futures.thread._global_shutdown_lock` during a run: a real
    lock made at import, which `submit` holds across its switch points (the
    pool's own, simulated, locks). A second simulated thread submitting then
    would block the OS thread for good. It only keeps `submit` apart from the
    interpreter's exit hook, which cannot run in the middle of a run, so in a
    run it is no lock at all (the real one is back when the run stops)."""

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return True

    def release(self) -> None:
        pass

    def __enter__(self) -> bool:
        return True

    def __exit__(self, *exc: object) -> None:
        pass


_NO_EXIT_RACE = _NoExitRace()


def _adjust_thread_count(self: Any) -> None:
    """A pool made before the run has a C queue its lane workers would block on
    (reached only through a subclass's own `submit`: the stock one hands the
    work to a stand-in, `_submit`)."""
    lanes = _lanes()
    if lanes is not None and not isinstance(self._work_queue, _PySimpleQueue):
        raise lanes.loop.escape(
            "ThreadPoolExecutor.submit() on an executor made before the run",
            "its workers would wait on a real queue; make the executor inside the run",
        )
    _real_adjust(self)


# -- install / restore -----------------------------------------------------------

_PATCHES: list[tuple[Any, str, Any]] = [
    (threading.Thread, "__init__", _init),
    (threading.Thread, "start", _start),
    (threading.Thread, "join", _join),
    (threading.Thread, "is_alive", _is_alive),
    (threading, "Lock", allocate_lock),
    (threading, "_allocate_lock", allocate_lock),
    (_thread, "allocate_lock", allocate_lock),
    (_thread, "allocate", allocate_lock),
    (threading, "_CRLock", None),
    (threading, "get_ident", get_ident),
    (threading, "get_native_id", get_ident),
    (_thread, "get_ident", get_ident),
    (threading, "current_thread", current_thread),
    (threading, "currentThread", current_thread),
    (threading, "local", local),
    (threading, "_newname", _newname),
    (futures_thread.ThreadPoolExecutor, "_adjust_thread_count", _adjust_thread_count),
    (futures_thread.ThreadPoolExecutor, "submit", _submit),
    (futures_thread.ThreadPoolExecutor, "shutdown", _shutdown),
    (futures_thread, "_global_shutdown_lock", _NO_EXIT_RACE),
]
if _PySimpleQueue is not None:
    _PATCHES.append((queue, "SimpleQueue", _PySimpleQueue))
_ORIGINALS: dict[tuple[Any, str], Any] = {
    (owner, name): getattr(owner, name) for owner, name, _ in _PATCHES
}


def install(owner: int) -> None:
    """Put the lane stand-ins in place for a stretch of running on OS thread `owner`."""
    global _owner
    _owner = owner
    for target, name, stand_in in _PATCHES:
        setattr(target, name, stand_in)
    futures_thread.ThreadPoolExecutor._counter = staticmethod(_pool_counter)  # type: ignore[attr-defined]


def restore() -> None:
    """Put the originals back; safe to repeat."""
    for target, name, _ in _PATCHES:
        setattr(target, name, _ORIGINALS[(target, name)])
    futures_thread.ThreadPoolExecutor._counter = _REAL_POOL_COUNTER  # type: ignore[attr-defined]


_REAL_POOL_COUNTER = futures_thread.ThreadPoolExecutor._counter  # type: ignore[attr-defined]


def _pool_counter() -> int:
    lanes = _lanes()
    if lanes is None:
        return _REAL_POOL_COUNTER()  # type: ignore[no-any-return]
    number = lanes.names.get("ThreadPoolExecutor-%d", -1) + 1
    lanes.names["ThreadPoolExecutor-%d"] = number
    return number


def forget_pool_threads() -> None:
    """Drop lane threads from `concurrent.futures`' exit list (nothing to join at exit)."""
    for thread in list(futures_thread._threads_queues):
        if getattr(thread, "_seedbed_lane", None) is not None:
            del futures_thread._threads_queues[thread]  # type: ignore[attr-defined]


def close_lanes(lanes: _threadlanes.ThreadLanes) -> None:
    """The loop closes: its unfinished threads end now, at a fixed point outside
    the run, as `abandon_pending` closes unfinished tasks (left to the garbage
    collector, a greenlet is killed whenever it is collected: inside a later
    run, whose trace its `finally` blocks would change). A pool worker's
    "Exception in worker" report of that exit is not logged. Their threads
    are stopped for the real `join`/`is_alive` and left for no one to join
    at interpreter exit."""
    unfinished = lanes.close()
    if _threadlanes.active() is not None:  # closed inside another run: never touch its patches
        _threadlanes.keep_undying([lane for lane in unfinished if lane.glet is not None])
        return
    hush = _Hush()
    futures_logger = logging.getLogger("concurrent.futures")
    futures_logger.addFilter(hush)
    install(_real_get_ident())
    previous = _threadlanes.activate(lanes)
    try:
        for lane in unfinished:
            _threadlanes.kill(lanes, lane)
            if lane.thread is not None:
                _stopped(lane.thread)
    finally:
        lanes.ready.clear()
        lanes.hub = None
        _threadlanes.activate(previous)
        restore()
        futures_logger.removeFilter(hush)
    forget_pool_threads()


class _Hush(logging.Filter):
    """Drops the records a killed pool worker logs on its way out."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False
