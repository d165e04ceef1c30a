"""Blocking waits inside a run never hang and never wait real time.

With `threads="inline"`, each wait either returns at once what the real
primitive would (the answer is already there) or fails the run with a
SimulationEscape naming the call and what to use instead. With thread lanes
(the default) a wait on the loop's thread blocks the loop while threads run:
one nothing can answer ends in a Deadlock, or in its timeout on virtual time.
Every test here hung or waited on main; each runs on a thread given 10
seconds, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

import pytest

import seedbed
from seedbed import Deadlock, SimulationEscape

# Every blocking call below would wait this long for real; the run gets 10 s
# (`_run_bounded`), so finishing at all proves it did not wait, whatever the load.
WAIT = 60


def _run_inside(blocking: Callable[[], Any], threads: str = "inline") -> Any:
    """Run `blocking()` as a task's body (see `_run_bounded`)."""

    async def main() -> Any:
        return blocking()

    return _run_bounded(main, threads)


def _run_bounded(main: Callable[[], Any], threads: str = "inline") -> Any:
    """Run `main` under seed 1; give up (not hang) after 10 real seconds."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = seedbed.run(main, seed=1, threads=threads)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the wait hung or took real time"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"].value


ESCAPES: list[tuple[str, Callable[[], Any], str]] = [
    ("Event.wait(timeout)", lambda: threading.Event().wait(WAIT), "threading.Event.wait()"),
    ("Event.wait()", lambda: threading.Event().wait(), "threading.Event.wait()"),
    (
        "Condition.wait_for(timeout)",
        lambda: _with(threading.Condition(), lambda c: c.wait_for(lambda: False, timeout=WAIT)),
        "threading.Condition.wait_for()",
    ),
    (
        "Condition.wait(timeout)",
        lambda: _with(threading.Condition(), lambda c: c.wait(WAIT)),
        "threading.Condition.wait()",
    ),
    (
        "Queue.get(timeout)",
        lambda: queue.Queue().get(timeout=WAIT),
        "Queue.get() on an empty queue",
    ),
    ("Queue.get()", lambda: queue.Queue().get(), "Queue.get() on an empty queue"),
    ("Queue.put on a full queue", lambda: _full_queue().put(2, timeout=WAIT), "Queue.put()"),
    (
        "Semaphore.acquire",
        lambda: threading.Semaphore(0).acquire(timeout=WAIT),
        "Semaphore.acquire",
    ),
    ("Barrier.wait", lambda: threading.Barrier(2).wait(WAIT), "threading.Barrier.wait()"),
    (
        "Future.result(timeout)",
        lambda: concurrent.futures.Future().result(WAIT),
        "concurrent.futures.Future.result()",
    ),
    (
        "concurrent.futures.wait",
        lambda: concurrent.futures.wait([concurrent.futures.Future()], timeout=WAIT),
        "concurrent.futures.wait()",
    ),
    (
        "concurrent.futures.as_completed",
        lambda: list(concurrent.futures.as_completed([concurrent.futures.Future()], timeout=WAIT)),
        "concurrent.futures.as_completed()",
    ),
]


def _with(condition: threading.Condition, body: Callable[[threading.Condition], Any]) -> Any:
    with condition:
        return body(condition)


def _full_queue() -> queue.Queue[int]:
    full: queue.Queue[int] = queue.Queue(maxsize=1)
    full.put(1)
    return full


@pytest.mark.parametrize(("blocking", "call"), [(b, c) for _, b, c in ESCAPES],
                         ids=[name for name, _, _ in ESCAPES])  # fmt: skip
def test_a_wait_that_cannot_be_satisfied_fails_at_once_naming_the_call(
    blocking: Callable[[], Any], call: str
) -> None:
    with pytest.raises(SimulationEscape) as caught:
        _run_inside(blocking)
    message = str(caught.value)
    assert call in message and "inside a simulated run" in message
    assert "asyncio" in message  # what to use instead
    assert "seed=1" in message


async def _wait_for_the_loop_from_executor_work() -> Any:
    loop = asyncio.get_running_loop()

    def blocking_work() -> Any:
        future = asyncio.run_coroutine_threadsafe(asyncio.sleep(0, "done"), loop)
        return future.result(timeout=WAIT)

    return await loop.run_in_executor(None, blocking_work)


def test_executor_work_waiting_for_the_loop_gets_its_answer() -> None:
    assert _run_bounded(_wait_for_the_loop_from_executor_work, "lanes") == "done"


# What a wait nothing answers ends in with thread lanes: a Deadlock, or its timeout.
_ENDINGS = (
    Deadlock, queue.Empty, queue.Full, TimeoutError, concurrent.futures.TimeoutError,
    threading.BrokenBarrierError,
)  # fmt: skip


@pytest.mark.parametrize(("blocking", "call"), [(b, c) for _, b, c in ESCAPES],
                         ids=[name for name, _, _ in ESCAPES])  # fmt: skip
def test_with_thread_lanes_a_wait_nothing_answers_ends_and_never_hangs(
    blocking: Callable[[], Any], call: str
) -> None:
    with contextlib.suppress(*_ENDINGS):  # else a timed wait timed out on virtual time
        _run_inside(blocking, "lanes")


@pytest.mark.filterwarnings("ignore:coroutine 'sleep' was never awaited")
def test_inline_executor_work_waiting_for_the_loop_fails_instead_of_hanging() -> None:
    with pytest.raises(SimulationEscape, match=r"Future\.result"):
        _run_bounded(_wait_for_the_loop_from_executor_work)


def test_waits_that_can_be_answered_now_return_what_the_real_primitive_would() -> None:
    def body() -> list[Any]:
        event = threading.Event()
        event.set()
        items: queue.Queue[str] = queue.Queue()
        items.put("item", timeout=1)
        condition = threading.Condition()
        with condition:
            ready = condition.wait_for(lambda: "ready", timeout=1)
        done: concurrent.futures.Future[int] = concurrent.futures.Future()
        done.set_result(7)
        finished = concurrent.futures.wait([done], timeout=1)
        semaphore = threading.Semaphore(1)
        with semaphore:
            pass
        return [
            event.wait(1),
            items.get(timeout=1),
            ready,
            done.result(timeout=1),
            len(finished.done),
            semaphore.acquire(timeout=1),
            threading.Barrier(1).wait(),
        ]

    assert _run_inside(body) == [True, "item", "ready", 7, 1, True, 0]


def test_the_primitives_are_the_stdlibs_again_after_a_run() -> None:
    original = threading.Event.wait
    _run_inside(lambda: None)
    assert threading.Event.wait is original
    assert not threading.Event().wait(0.001)  # a real, short wait outside a run


def test_executor_work_queued_before_the_loop_runs_cannot_wait_for_it() -> None:
    """CPython's test_asyncio calls `run_in_executor` before `run_until_complete`: on
    stock the job runs in a thread while the loop runs; here it runs inline at once,
    and its `result(timeout)` is refused instead of waiting real seconds."""

    async def add() -> int:
        return 3

    loop = seedbed.new_event_loop(seed=1)
    try:

        def target() -> int:
            future = asyncio.run_coroutine_threadsafe(add(), loop)
            try:
                return future.result(timeout=2)
            finally:
                future.cancel()

        job = loop.run_in_executor(None, target)
        with pytest.raises(SimulationEscape, match=r"Future\.result\(\) on a pending future"):
            loop.run_until_complete(job)
        loop.run_until_complete(asyncio.sleep(0))  # the coroutine it submitted runs now
    finally:
        loop.close()
    assert threading.Event.wait is _REAL_EVENT_WAIT  # the stand-ins left with the job


_REAL_EVENT_WAIT = threading.Event.wait


@pytest.mark.parametrize("threads", ["inline", "lanes"])
def test_multiprocessing_waits_are_answered_or_refused(threads: str) -> None:
    import multiprocessing

    def body() -> list[Any]:
        ready = multiprocessing.Event()
        ready.set()
        answered = ready.wait(2)
        multiprocessing.Event().wait(2)  # nothing could ever set it
        return [answered]

    with pytest.raises(SimulationEscape, match=r"multiprocessing\.Event\.wait\(\)"):
        _run_inside(body, threads)
    if threads == "lanes":  # from a simulated thread too: never a real wait

        async def in_a_thread() -> Any:
            return await asyncio.to_thread(body)

        with pytest.raises(SimulationEscape, match=r"multiprocessing\.Event\.wait\(\)"):
            _run_bounded(in_a_thread, threads)
