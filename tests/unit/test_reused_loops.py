"""A seedbed loop as other people's test suites use it (issue 31).

Test plugins hand out loops through `asyncio.Runner` and reuse them: anyio's
pytest plugin keeps one Runner for many tests and forgets it only when
`Runner.close()` returns normally. Suites turn on asyncio's debug mode
through the environment, and some talk to the loop from real threads. Each
test here is the failing suite's pattern, reduced.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import seedbed

SRC = Path(__file__).resolve().parents[2] / "src"


def _factory() -> asyncio.AbstractEventLoop:
    return seedbed.new_event_loop(seed=1)


async def _escapes() -> None:
    time.sleep(0.001)  # refused: SimulationEscape


async def _passes() -> float:
    await asyncio.sleep(5)
    return asyncio.get_running_loop().time()


# -- 31.1: a failure leaves the loop once -------------------------------------


def test_a_runner_reused_after_an_escape_runs_the_next_test_and_closes_normally() -> None:
    runner = asyncio.Runner(loop_factory=_factory)
    with pytest.raises(seedbed.SimulationEscape, match=r"time\.sleep"):
        runner.run(_escapes())
    assert runner.run(_passes()) >= 5.0  # the next test on the same loop
    runner.close()  # anyio's plugin forgets the runner only if this returns


def test_close_returns_normally_right_after_an_escape() -> None:
    runner = asyncio.Runner(loop_factory=_factory)
    with pytest.raises(seedbed.SimulationEscape):
        runner.run(_escapes())
    runner.close()
    with pytest.raises(RuntimeError, match="Runner is closed"):
        runner.get_loop()  # closed for good, as stock's: the plugin makes a new one


def test_anyio_style_runner_task_survives_an_escaping_test() -> None:
    """anyio runs every test inside one long-lived task fed through a queue."""
    loop = seedbed.new_event_loop(seed=1)
    inbox: asyncio.Queue[tuple[object, asyncio.Future[object]]] = asyncio.Queue()

    async def runner_task() -> None:
        while True:
            coro, done = await inbox.get()
            try:
                done.set_result(await coro)  # type: ignore[misc]
            except Exception as exc:
                done.set_exception(exc)

    async def call(coro: object) -> object:
        done: asyncio.Future[object] = loop.create_future()
        inbox.put_nowait((coro, done))
        return await done

    serving = loop.create_task(runner_task())
    outcomes = []
    for test in (_passes, _escapes, _passes):
        try:
            outcomes.append(loop.run_until_complete(call(test())))
        except seedbed.SimulationEscape:
            outcomes.append("escape")
    serving.cancel()
    loop.run_until_complete(asyncio.gather(serving, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    assert outcomes[1] == "escape"
    assert isinstance(outcomes[0], float) and isinstance(outcomes[2], float)
    assert outcomes[2] >= outcomes[0] + 5.0  # the same loop, its clock going on


# -- 31.3: debug mode as stock asyncio decides it ------------------------------


def _debug_in_child(env: dict[str, str], *flags: str) -> tuple[bool, bool]:
    """(stock loop's get_debug(), seedbed loop's get_debug()) in a fresh process."""
    code = (
        "import asyncio, seedbed\n"
        "stock = asyncio.new_event_loop(); print(stock.get_debug()); stock.close()\n"
        "print(seedbed.new_event_loop(seed=1).get_debug())\n"
    )
    base = {k: v for k, v in os.environ.items() if k != "PYTHONASYNCIODEBUG"}
    done = subprocess.run(
        [sys.executable, *flags, "-c", code],
        env={**base, "PYTHONPATH": str(SRC), "PYTHONHASHSEED": "0", **env},
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    stock, ours = done.stdout.split()
    return stock == "True", ours == "True"


@pytest.mark.parametrize(
    ("env", "flags", "expected"),
    [
        ({}, (), False),
        ({"PYTHONASYNCIODEBUG": "1"}, (), True),
        ({"PYTHONASYNCIODEBUG": ""}, (), False),
        ({}, ("-X", "dev"), True),
        ({"PYTHONASYNCIODEBUG": "1"}, ("-E",), False),  # -E ignores the environment
    ],
    ids=["unset", "set", "empty", "dev-mode", "ignore-environment"],
)
def test_a_new_loop_starts_in_debug_mode_exactly_when_stocks_would(
    env: dict[str, str], flags: tuple[str, ...], expected: bool
) -> None:
    assert _debug_in_child(env, *flags) == (expected, expected)


def test_debug_mode_changes_no_trace() -> None:
    async def main() -> None:
        await asyncio.gather(*(asyncio.sleep(i / 10) for i in range(5)))

    hashes = []
    for debug in (False, True):
        loop = seedbed.new_event_loop(seed=4)
        loop.set_debug(debug)
        loop.run_until_complete(main())
        loop.close()
        hashes.append(loop.trace.hash)
    assert hashes[0] == hashes[1]


def test_debug_mode_tracks_where_coroutines_were_made_during_the_run_only() -> None:
    before = sys.get_coroutine_origin_tracking_depth()
    loop = seedbed.new_event_loop(seed=1)
    loop.set_debug(True)

    async def depth() -> int:
        return sys.get_coroutine_origin_tracking_depth()

    assert loop.run_until_complete(depth()) > 0
    loop.close()
    assert sys.get_coroutine_origin_tracking_depth() == before


# -- 31.4: a loop only another thread can wake ---------------------------------


def test_a_future_only_a_real_thread_completes_waits_for_that_threads_call() -> None:
    """With nothing else to run, the loop waits for the other thread's call (the
    order of events cannot depend on its timing: nothing else happens meanwhile)."""
    loop = seedbed.new_event_loop(seed=1)
    future = loop.create_future()

    def waker() -> None:
        loop.call_soon_threadsafe(future.set_result, 7)

    thread = threading.Thread(target=waker, name="waker")
    thread.start()  # before the run: starting one inside it makes a simulated thread
    try:
        assert loop.run_until_complete(future) == 7
    finally:
        thread.join()
    loop.close()


def test_with_no_other_thread_alive_the_same_wait_is_a_deadlock() -> None:
    loop = seedbed.new_event_loop(seed=1)
    with pytest.raises(seedbed.Deadlock):
        loop.run_until_complete(loop.create_future())
    loop.close()


def test_a_portal_loop_in_a_worker_thread_escapes_naming_the_main_thread() -> None:
    """anyio's BlockingPortal: the loop runs in a worker and waits for the caller."""

    def portal() -> str:
        loop = seedbed.new_event_loop(seed=1)
        try:
            loop.run_until_complete(loop.create_future())
        except seedbed.SimulationEscape as exc:
            return str(exc)
        finally:
            loop.close()
        return "returned"

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        message = pool.submit(portal).result(timeout=30)
    assert "another thread ('MainThread')" in message


def test_a_call_from_another_thread_runs_only_once_the_loop_has_nothing_ready() -> None:
    loop = seedbed.new_event_loop(seed=1)
    go, called = threading.Event(), threading.Event()
    order: list[str] = []

    def caller() -> None:
        go.wait(10)
        loop.call_soon_threadsafe(order.append, "call")
        called.set()

    async def main() -> None:
        go.set()
        while not called.is_set():  # spin on virtual time until the thread called in
            await asyncio.sleep(0)
        for _ in range(3):  # the loop is busy: the call waits in its inbox
            await asyncio.sleep(0)
        order.append("busy loop done")
        await asyncio.sleep(0.1)  # nothing ready: the call lands here

    thread = threading.Thread(target=caller, name="caller")
    thread.start()
    try:
        loop.run_until_complete(main())
    finally:
        go.set()
        thread.join()
    loop.close()
    assert order == ["busy loop done", "call"]


# -- 31.5: no teardown noise stock asyncio does not print ----------------------


def _abandon_in_a_cycle(make_loop: Any) -> list[str]:
    """aioitertools' helper and its zip_longest: a loop per test, closed without
    shutdown_asyncgens, and an async generator dropped inside a reference cycle
    (its StopAsyncIteration's traceback), so only the garbage collector finalizes
    it. The RuntimeWarnings and unraisable errors that follow, as text."""

    async def numbers() -> Any:
        for n in range(10):
            yield n

    async def take_one() -> int:
        cycle: dict[str, Any] = {"gen": numbers()}
        cycle["self"] = cycle
        return int(await cycle["gen"].__anext__())  # iterated, then abandoned

    noise: list[str] = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda raised: noise.append(f"unraisable: {raised.exc_value}")
    gc.collect()
    gc.disable()  # the collector runs only where the test says
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loop = make_loop()
            try:
                assert loop.run_until_complete(take_one()) == 0
            finally:
                loop.close()
            del loop
            gc.collect()
        noise += [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    finally:
        gc.enable()
        sys.unraisablehook = old_hook
    return noise


def test_an_abandoned_async_generator_leaves_no_noise_when_the_loop_just_closes() -> None:
    assert _abandon_in_a_cycle(asyncio.new_event_loop) == []  # stock: silent
    assert _abandon_in_a_cycle(lambda: seedbed.new_event_loop(seed=1)) == []


def test_a_run_seedbed_owns_stays_a_deadlock_whatever_threads_are_alive() -> None:
    """seedbed.run's loop is born inside the call: no thread can hold it (a sweep's
    worker threads, Dask's, must not turn its seeds' deadlocks into escapes)."""
    go = threading.Event()
    bystander = threading.Thread(target=lambda: go.wait(10), name="bystander")
    bystander.start()

    async def main() -> None:
        await asyncio.get_running_loop().create_future()

    try:
        with pytest.raises(seedbed.Deadlock):
            seedbed.run(main, seed=1)
    finally:
        go.set()
        bystander.join()


def test_a_failure_unwinds_through_the_program_before_it_leaves_the_loop() -> None:
    """Issue 42, item 10 (anyio's `test_thread_cancelled`): a runner keeps one task that
    runs test after test. An escape inside a test's task group used to halt the loop
    with the group still unwinding, so the runner's close cancelled that task midway
    (anyio swallowed it: a deadlock, then "Runner is closed" for the next test). As on
    stock, the error now unwinds through the program first: cleanups run, the runner
    task is back waiting for the next test, and the error leaves the loop."""
    import time

    cleaned: list[str] = []

    async def child() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            cleaned.append("child")

    async def failing_test() -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(child())
            await asyncio.sleep(0)
            time.sleep(0.001)  # refused on the loop's thread: an escape

    async def serve(inbox: asyncio.Queue[Any]) -> None:
        while True:
            coro, answer = await inbox.get()
            try:
                answer.set_result(await coro)
            except Exception as exc:
                answer.set_exception(exc)

    async def run_test(state: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        if "runner" not in state:
            state["inbox"] = asyncio.Queue()
            state["runner"] = loop.create_task(serve(state["inbox"]))
        answer = loop.create_future()
        state["inbox"].put_nowait((failing_test(), answer))
        return await answer

    state: dict[str, Any] = {}
    runner = asyncio.Runner(loop_factory=lambda: seedbed.new_event_loop(seed=1))
    with pytest.raises(seedbed.SimulationEscape, match=r"time\.sleep\(\)"):
        runner.run(run_test(state))
    assert cleaned == ["child"]  # the group unwound inside the run, as on stock
    assert not state["runner"].done()  # idle, waiting for the next test
    runner.close()  # cancels it there: no deadlock
    assert state["runner"].cancelled()
