"""Blocking waits inside a run: answered at once, or a `SimulationEscape`.

A simulation is one thread. A blocking wait on a threading or queue primitive
can only be satisfied by another thread, and none runs inside a run, so
before this module it hung forever (`queue.Queue.get(timeout=)`,
`Condition.wait_for(timeout=)`: their clock is the virtual one, which cannot
advance while the loop is blocked) or waited real time (`Event.wait(timeout)`,
`concurrent.futures.Future.result(timeout)`). Code run inline by
`run_in_executor` that waits for the loop
(`run_coroutine_threadsafe(...).result()`) hung too.

With thread lanes (the default, see `_threadlanes`) these stand-ins let every
wait through to the real methods, which are built on lane locks
(`_lanesync`): a simulated thread parks, and the loop's own code blocks the
loop while threads run, as a real loop's thread blocks (`_loopwait`); a wait
nothing can ever answer ends the run in a `Deadlock`. What follows is the
inline mode (`threads="inline"`), and work run inline before a run.

Inside a run (the running loop of this thread is a `SeedbedLoop`), and in
executor work that a `SeedbedLoop` runs inline before it runs (`inline`:
`loop.run_in_executor(None, f)` outside the loop, as CPython's own tests
call it; on stock `f` runs in a thread while the loop runs, here nothing can
run until `f` returns), each wait
below returns what the real primitive would if that answer is available
without waiting (a set event, a non-empty queue, a done future, a true
predicate); otherwise it raises the loop's `SimulationEscape`, naming the call
and what to use instead. Outside a run, and on other threads, the originals
run. `install()` and `restore()` bracket each stretch of running.

`multiprocessing`'s `Event.wait`, `Condition.wait`/`wait_for` and
`Queue.get`/`put` are covered the same way: they waited real time for a
process that a simulation never starts.

Not reachable from Python: `threading.Lock`/`RLock.acquire`,
`queue.SimpleQueue.get` (C methods of C types) and `multiprocessing`'s
`Lock`/`Semaphore.acquire` (C methods bound on each instance).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures._base as futures_base
import contextlib
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from seedbed.aio import _foreign, _threadlanes

try:  # absent where the platform has no sem_open
    import multiprocessing.queues as mp_queues
    import multiprocessing.synchronize as mp_sync
except ImportError:  # pragma: no cover
    mp_queues = mp_sync = None  # type: ignore[assignment]

_THREADS = (
    "on the event loop's thread it waits for another thread, blocking every task "
    "(and with threads='inline' no other thread runs); wait inside a thread "
    "(await asyncio.to_thread(...)) or use the asyncio equivalent (asyncio.Event, "
    "asyncio.Condition, asyncio.Queue, asyncio.Semaphore, asyncio.Barrier) from tasks"
)
_FUTURES = (
    "it waits for work that cannot finish while the simulation is blocked (executor work "
    "runs inline; a coroutine needs the loop); await the future instead "
    "(await asyncio.wrap_future(f), or await the coroutine itself)"
)

# (owner, attribute) -> original, captured at import so a restore is exact.
_ORIGINALS: dict[tuple[Any, str], Any] = {}


_inline: list[tuple[Any, int]] = []  # (loop, thread) of executor work run before a run


def _loop() -> Any:
    """The simulation's loop if one runs on this thread (or runs a job inline), else None."""
    from seedbed.aio.loop import SeedbedLoop  # the loop imports this module

    loop = asyncio.events._get_running_loop()
    if _threadlanes.active() is not None:
        return None  # thread lanes: every wait parks a thread or blocks the loop (`_loopwait`)
    if isinstance(loop, SeedbedLoop):
        return loop
    if _inline and loop is None and _inline[-1][1] == threading.get_ident():
        return _inline[-1][0]
    return None


@contextlib.contextmanager
def inline(loop: Any) -> Iterator[None]:
    """Executor work `loop` runs inline while it is not running: its waits are refused too."""
    _inline.append((loop, threading.get_ident()))
    install()
    try:
        yield
    finally:
        _inline.pop()
        if not _inline:
            restore()


def _real(owner: Any, name: str) -> Any:
    return _ORIGINALS[(owner, name)]


def _now(timeout: float | None) -> bool:
    """A zero (or negative) timeout asks without waiting: the real call answers."""
    return timeout is not None and timeout <= 0


def _event_wait(self: threading.Event, timeout: float | None = None) -> bool:
    loop = _loop()
    if loop is None or self.is_set() or _now(timeout):
        return bool(_real(threading.Event, "wait")(self, timeout))
    raise loop.escape("threading.Event.wait()", _THREADS)


def _condition_wait(self: threading.Condition, timeout: float | None = None) -> bool:
    loop = _loop()
    if loop is None or _now(timeout):
        done = _foreign.waits(self)  # another thread waiting for a running loop (`_foreign`)
        try:
            return bool(_real(threading.Condition, "wait")(self, timeout))
        finally:
            if done is not None:
                done()
    raise loop.escape("threading.Condition.wait()", _THREADS)


def _condition_notify(self: threading.Condition, n: int = 1) -> None:
    _foreign.notified(self)
    _real(threading.Condition, "notify")(self, n)


def _condition_wait_for(
    self: threading.Condition, predicate: Callable[[], Any], timeout: float | None = None
) -> Any:
    loop = _loop()
    if loop is None:
        return _real(threading.Condition, "wait_for")(self, predicate, timeout)
    result = predicate()
    if result:
        return result
    raise loop.escape("threading.Condition.wait_for()", _THREADS)


def _semaphore_acquire(
    self: threading.Semaphore, blocking: bool = True, timeout: float | None = None
) -> bool:
    real = _real(threading.Semaphore, "acquire")
    loop = _loop()
    if loop is None or not blocking or _now(timeout):
        return bool(real(self, blocking, timeout))
    if real(self, False):
        return True
    raise loop.escape("threading.Semaphore.acquire()", _THREADS)


def _barrier_wait(self: threading.Barrier, timeout: float | None = None) -> int:
    loop = _loop()
    if loop is None or self.parties == 1:
        return int(_real(threading.Barrier, "wait")(self, timeout))
    raise loop.escape("threading.Barrier.wait()", _THREADS)


def _queue_get(self: queue.Queue[Any], block: bool = True, timeout: float | None = None) -> Any:
    real = _real(queue.Queue, "get")
    loop = _loop()
    if loop is None or not block or _now(timeout):
        return real(self, block, timeout)
    try:
        return real(self, False)
    except queue.Empty:
        raise loop.escape(f"{type(self).__name__}.get() on an empty queue", _THREADS) from None


def _queue_put(
    self: queue.Queue[Any], item: Any, block: bool = True, timeout: float | None = None
) -> None:
    real = _real(queue.Queue, "put")
    loop = _loop()
    if loop is None or not block or _now(timeout):
        real(self, item, block, timeout)
        return
    try:
        real(self, item, False)
    except queue.Full:
        raise loop.escape(f"{type(self).__name__}.put() on a full queue", _THREADS) from None


def _future_result(self: concurrent.futures.Future[Any], timeout: float | None = None) -> Any:
    loop = _loop()
    if loop is not None and not self.done():
        raise loop.escape("concurrent.futures.Future.result() on a pending future", _FUTURES)
    return _real(concurrent.futures.Future, "result")(self, timeout)


def _future_exception(
    self: concurrent.futures.Future[Any], timeout: float | None = None
) -> BaseException | None:
    loop = _loop()
    if loop is not None and not self.done():
        raise loop.escape("concurrent.futures.Future.exception() on a pending future", _FUTURES)
    return _real(concurrent.futures.Future, "exception")(self, timeout)  # type: ignore[no-any-return]


def _satisfied(fs: list[concurrent.futures.Future[Any]], return_when: str) -> bool:
    done = [f for f in fs if f.done()]
    if len(done) == len(fs):
        return True
    if return_when == concurrent.futures.FIRST_COMPLETED:
        return bool(done)
    if return_when == concurrent.futures.FIRST_EXCEPTION:
        return any(not f.cancelled() and f.exception() is not None for f in done)
    return False


def _futures_wait(
    fs: Iterable[concurrent.futures.Future[Any]],
    timeout: float | None = None,
    return_when: str = concurrent.futures.ALL_COMPLETED,
) -> Any:
    real = _real(futures_base, "wait")
    loop = _loop()
    if loop is None:
        return real(fs, timeout, return_when)
    fs = list(fs)
    if _satisfied(fs, return_when):
        return real(fs, 0, return_when)
    raise loop.escape("concurrent.futures.wait() on pending futures", _FUTURES)


def _futures_as_completed(
    fs: Iterable[concurrent.futures.Future[Any]], timeout: float | None = None
) -> Any:
    real = _real(futures_base, "as_completed")
    loop = _loop()
    if loop is None:
        return real(fs, timeout)
    fs = list(fs)
    if all(f.done() for f in fs):
        return real(fs, timeout)
    raise loop.escape("concurrent.futures.as_completed() on pending futures", _FUTURES)


def _process_loop() -> Any:
    """The run's loop for `multiprocessing` waits: another process never runs in
    a simulation, so they are refused on the run's thread in either mode (a
    simulated thread included), never left to block the OS thread."""
    lanes = _threadlanes.active()
    if lanes is not None and _threadlanes.on_run_thread():
        return lanes.loop
    return _loop()


def _mp_event_wait(self: Any, timeout: float | None = None) -> bool:
    loop = _process_loop()
    if loop is None or self.is_set():
        return bool(_real(mp_sync.Event, "wait")(self, timeout))
    raise loop.escape("multiprocessing.Event.wait()", _PROCESSES)


def _mp_condition_wait(self: Any, timeout: float | None = None) -> bool:
    loop = _process_loop()
    if loop is None:
        return bool(_real(mp_sync.Condition, "wait")(self, timeout))
    raise loop.escape("multiprocessing.Condition.wait()", _PROCESSES)


def _mp_queue_get(self: Any, block: bool = True, timeout: float | None = None) -> Any:
    real = _real(mp_queues.Queue, "get")
    loop = _process_loop()
    if loop is None or not block:
        return real(self, block, timeout)
    try:
        return real(self, False)
    except queue.Empty:
        raise loop.escape("multiprocessing.Queue.get() on an empty queue", _PROCESSES) from None


_PROCESSES = (
    "it waits for another process, and none runs inside a simulation; use the asyncio "
    "equivalent (asyncio.Event, asyncio.Condition, asyncio.Queue) from tasks"
)

_STAND_INS: list[tuple[Any, str, Callable[..., Any]]] = [
    (threading.Event, "wait", _event_wait),
    (threading.Condition, "wait", _condition_wait),
    (threading.Condition, "wait_for", _condition_wait_for),
    (threading.Condition, "notify", _condition_notify),
    (threading.Semaphore, "acquire", _semaphore_acquire),
    (threading.Semaphore, "__enter__", _semaphore_acquire),
    (threading.Barrier, "wait", _barrier_wait),
    (queue.Queue, "get", _queue_get),
    (queue.Queue, "put", _queue_put),
    (concurrent.futures.Future, "result", _future_result),
    (concurrent.futures.Future, "exception", _future_exception),
    (futures_base, "wait", _futures_wait),
    (concurrent.futures, "wait", _futures_wait),
    (futures_base, "as_completed", _futures_as_completed),
    (concurrent.futures, "as_completed", _futures_as_completed),
]
if mp_sync is not None:
    _STAND_INS += [
        (mp_sync.Event, "wait", _mp_event_wait),
        (mp_sync.Condition, "wait", _mp_condition_wait),
        (mp_queues.Queue, "get", _mp_queue_get),
    ]
for _owner, _name, _ in _STAND_INS:
    _ORIGINALS[(_owner, _name)] = getattr(_owner, _name)


def install() -> None:
    """Put the stand-ins in place (a stretch of running begins)."""
    for owner, name, stand_in in _STAND_INS:
        setattr(owner, name, stand_in)


def restore() -> None:
    """Put the originals back; safe to repeat."""
    for owner, name, _ in _STAND_INS:
        setattr(owner, name, _ORIGINALS[(owner, name)])
