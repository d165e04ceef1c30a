"""Real threads calling into a standalone loop take turns with it (a portal).

A test client runs the app's loop in a worker thread and calls in from the
test's thread (Starlette's TestClient over anyio's BlockingPortal). The loop
takes such calls only when it has nothing ready, and before moving virtual
time on it waits until each caller calls again or waits for it, so what the
caller sees never depends on real timing (see `seedbed.aio._foreign`).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import seedbed


def _portal_session(seed: int) -> list[Any]:
    """A loop in a worker thread with a ticking background task; the main thread
    calls in three times and reads what the loop has done by then."""
    ready = threading.Event()
    box: dict[str, Any] = {}

    def serve() -> None:
        loop = seedbed.new_event_loop(seed=seed)
        box["loop"] = loop
        stop = loop.create_future()
        box["stop"] = stop
        ticks: list[float] = []
        box["ticks"] = ticks

        async def ticker() -> None:
            while True:
                await asyncio.sleep(0.1)
                ticks.append(loop.time())

        async def main() -> None:
            task = asyncio.ensure_future(ticker())
            ready.set()
            await stop
            task.cancel()

        loop.run_until_complete(main())
        loop.close()

    worker = threading.Thread(target=serve, name="portal")
    worker.start()
    ready.wait(10)
    loop, ticks = box["loop"], box["ticks"]

    async def look(pause: float) -> tuple[int, float]:
        await asyncio.sleep(pause)
        return len(ticks), round(loop.time(), 6)

    seen = [
        asyncio.run_coroutine_threadsafe(look(pause), loop).result(timeout=10)
        for pause in (0.25, 0.05, 0.5)
    ]
    loop.call_soon_threadsafe(box["stop"].set_result, None)
    worker.join(10)
    return seen


def test_calls_from_the_test_thread_into_a_portal_loop_see_the_same_run_every_time() -> None:
    first = _portal_session(3)
    assert first == _portal_session(3)
    assert [count for count, _ in first] == sorted(count for count, _ in first)
    assert first[0][1] >= 0.25
    assert first[0][0] <= 3  # the loop waited for the call: it did not race ahead


def test_another_os_thread_is_itself_while_a_simulated_thread_runs() -> None:
    """The test's thread asks who it is (an RLock records it, a `local` keys by
    it) while the run's thread is in a simulated thread: the answer is its own,
    or releasing a portal future's RLock after the run switched threads raises
    "cannot release un-acquired lock" (Starlette's TestClient)."""
    import _thread

    go, back = _thread.allocate_lock(), _thread.allocate_lock()
    go.acquire()
    back.acquire()
    seen: dict[str, Any] = {}

    def outside() -> None:
        go.acquire()  # while the simulated thread below holds the run's OS thread
        seen["ident"] = threading.get_ident()
        seen["name"] = threading.current_thread().name
        lock = threading.RLock()
        lock.acquire()
        seen["local"] = threading.local()
        seen["local"].value = "outside"
        back.release()
        go.acquire()  # the simulated thread has ended: another one may run
        try:
            lock.release()  # raised RuntimeError when the RLock took the lane's ident
            seen["value"] = seen["local"].value
        except RuntimeError as exc:
            seen["value"] = exc
        finally:
            back.release()

    other = threading.Thread(target=outside, name="the test's thread")
    other.start()

    def in_a_thread() -> str:
        go.release()
        back.acquire()  # a real lock: the run's OS thread waits here, in this lane
        seen["local"].value = "lane"
        return threading.current_thread().name

    async def main() -> str:
        name = await asyncio.to_thread(in_a_thread)
        go.release()
        back.acquire()
        return name

    assert seedbed.run(main, seed=1).value == "asyncio_0"
    other.join(10)
    assert seen["ident"] == other.ident
    assert seen["name"] == "the test's thread"
    assert seen["value"] == "outside"


def test_a_call_into_a_closed_loop_raises_as_asyncios_does() -> None:
    """asgiref's `async_to_sync` remembers the loop a thread was last called from
    and, on the next call, tries `call_soon_threadsafe` on it: a closed loop must
    say so, or the callback is queued where nothing will ever run it and the
    caller waits forever."""
    loop = seedbed.new_event_loop(seed=1)
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            loop.call_soon_threadsafe(print, "never")
        except RuntimeError as exc:
            errors.append(exc)

    call()  # the loop's own thread
    other = threading.Thread(target=call)  # and another one
    other.start()
    other.join(10)
    assert [str(exc) for exc in errors] == ["Event loop is closed"] * 2
