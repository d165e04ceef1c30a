"""Threads as seeded lanes: a program's threads run inside the simulation.

`threading.Thread`, `asyncio.to_thread` and `run_in_executor` work runs as a
simulated thread of its node, switching at blocking points, the seed picking
who goes next (see `seedbed.aio._threadlanes`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import queue
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

import seedbed
from seedbed import Deadlock, SimulationEscape


async def _sell_twice() -> list[str]:
    """A blocking purchase (check stock, call the payment API, decrement) on a
    thread racing an async one over the last item."""
    stock = {"items": 1}
    sold: list[str] = []

    def buy_blocking() -> None:
        if stock["items"] > 0:
            time.sleep(0.0015)  # the payment API
            stock["items"] -= 1
            sold.append("thread")

    async def buy_async() -> None:
        await asyncio.sleep(0.001)
        if stock["items"] > 0:
            await asyncio.sleep(0)  # the async payment call
            stock["items"] -= 1
            sold.append("task")

    await asyncio.gather(asyncio.to_thread(buy_blocking), buy_async())
    return sold


def test_a_to_thread_check_then_act_race_is_found_within_40_seeds() -> None:
    outcomes = [seedbed.run(_sell_twice, seed=seed).value for seed in range(40)]
    oversold = [seed for seed, sold in enumerate(outcomes) if len(sold) > 1]
    assert oversold, "the oversell was never found"
    assert len(oversold) < 40, "every seed oversold: the interleaving is not explored"


def test_the_inline_executor_refuses_the_blocking_purchase_it_cannot_interleave() -> None:
    with pytest.raises(SimulationEscape, match=r"time\.sleep\(\)"):
        seedbed.run(_sell_twice, seed=0, threads="inline")


async def _lock_order() -> None:
    first, second = threading.Lock(), threading.Lock()

    def one() -> None:
        with first, second:
            pass

    def two() -> None:
        with second, first:
            pass

    threads = [threading.Thread(target=one), threading.Thread(target=two)]
    for thread in threads:
        thread.start()
    for thread in threads:
        await asyncio.to_thread(thread.join)


def test_two_threads_taking_two_locks_in_opposite_orders_end_in_a_deadlock() -> None:
    deadlocks: list[str] = []
    for seed in range(40):
        try:
            seedbed.run(_lock_order, seed=seed, max_steps=10_000)
        except Deadlock as exc:
            deadlocks.append(str(exc))
    assert deadlocks, "no seed of 40 deadlocked"
    assert len(deadlocks) < 40
    message = deadlocks[0]
    assert "thread 'Thread-1 (one)'" in message
    assert "acquiring lock #2, held by thread 'Thread-2 (two)'" in message
    assert "acquiring lock #1, held by thread 'Thread-1 (one)'" in message


def test_time_sleep_in_a_thread_advances_virtual_time_only() -> None:
    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.to_thread(time.sleep, 30)
        return start, loop.time()

    began = time.monotonic()
    start, end = seedbed.run(main, seed=3).value
    assert 30 <= end - start < 30.1
    assert time.monotonic() - began < 5  # virtual seconds, not real ones


def test_time_sleep_on_the_loops_own_thread_is_still_refused() -> None:
    async def main() -> None:
        time.sleep(1)

    with pytest.raises(SimulationEscape, match=r"time\.sleep\(\)"):
        seedbed.run(main, seed=0)


def test_current_thread_ident_and_thread_locals_are_per_thread() -> None:
    async def main() -> dict[str, Any]:
        local = threading.local()
        local.owner = "loop"
        seen: dict[str, Any] = {}

        def work(key: str) -> None:
            seen[key] = (
                threading.current_thread().name,
                threading.get_ident(),
                getattr(local, "owner", None),
            )
            local.owner = key

        threads = [threading.Thread(target=work, args=(key,), name=key) for key in "ab"]
        for thread in threads:
            thread.start()
        await asyncio.to_thread(lambda: [thread.join() for thread in threads])
        seen["loop"] = (threading.current_thread().name, threading.get_ident(), local.owner)
        return seen

    seen = seedbed.run(main, seed=5).value
    assert seen["a"][0] == "a" and seen["b"][0] == "b"
    assert seen["a"][2] is None and seen["b"][2] is None  # each thread's own local
    assert seen["loop"][2] == "loop"
    assert len({seen[key][1] for key in ("a", "b", "loop")}) == 3
    assert seen["loop"][0] == threading.current_thread().name


def test_thread_names_count_from_one_in_every_run() -> None:
    async def main() -> list[str]:
        names = []
        for _ in range(2):
            thread = threading.Thread(target=lambda: None)
            thread.start()
            names.append(thread.name)
        return names

    assert seedbed.run(main, seed=0).value == seedbed.run(main, seed=1).value
    assert seedbed.run(main, seed=0).value[0].startswith("Thread-1")


def test_the_loop_blocked_on_a_lock_a_thread_holds_waits_for_the_thread() -> None:
    async def main() -> list[str]:
        lock = threading.Lock()
        order: list[str] = []
        entered = threading.Event()

        def hold() -> None:
            with lock:
                entered.set()
                time.sleep(1)
                order.append("thread")

        threading.Thread(target=hold).start()
        await asyncio.to_thread(entered.wait)
        with lock:  # blocks the loop's thread until the thread lets go
            order.append("loop")
        return order

    assert seedbed.run(main, seed=2).value == ["thread", "loop"]


def test_a_crashed_nodes_threads_never_run_again_inside_the_run() -> None:
    ticks: list[float] = []
    cleanups: list[str] = []

    async def server() -> None:
        def beat() -> None:
            try:
                while True:
                    time.sleep(0.1)
                    ticks.append(time.monotonic())
            finally:
                cleanups.append("finally")

        threading.Thread(target=beat, daemon=True).start()
        await asyncio.sleep(3600)

    sim = seedbed.Simulation(seed=4)

    async def client() -> tuple[int, int]:
        await asyncio.sleep(1.0)
        sim.crash("n1")
        seen = len(ticks)
        await asyncio.sleep(1.0)
        return len(ticks) - seen, len(cleanups)

    sim.host("n1", server)
    sim.client("c1", client)
    result = sim.run(max_time=10)
    assert 5 <= len(ticks) <= 10
    assert result.values["c1"] == (0, 0)  # no beat, and no `finally`, after the crash
    assert cleanups == ["finally"]  # run when the world closed, outside the run


_LIBRARY = textwrap.dedent(
    """
    import asyncio, json, sys, threading, time
    import seedbed

    class Poller:
        '''A library with its own worker thread that reports through call_soon_threadsafe.'''

        def __init__(self, loop):
            self.loop = loop
            self.results = asyncio.Queue()
            self.thread = threading.Thread(target=self._work, name="poller", daemon=True)

        def _work(self):
            for n in range(5):
                time.sleep(0.25)
                self.loop.call_soon_threadsafe(self.results.put_nowait, n * n)
            self.loop.call_soon_threadsafe(self.results.put_nowait, None)

    async def main():
        poller = Poller(asyncio.get_running_loop())
        poller.thread.start()
        got = []
        while (item := await poller.results.get()) is not None:
            got.append((item, round(asyncio.get_running_loop().time(), 6)))
        return got

    result = seedbed.run(main, seed=int(sys.argv[1]))
    print(json.dumps({"value": result.value, "hash": result.trace_hash}))
    """
)


def _run_library(seed: int, hashseed: str) -> dict[str, Any]:
    env = {"PYTHONHASHSEED": hashseed, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", _LIBRARY, str(seed)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "PYTHONPATH": ":".join(sys.path)},
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_librarys_background_thread_reporting_through_call_soon_threadsafe_runs() -> None:
    first = _run_library(7, "0")
    second = _run_library(7, "123")
    assert [item for item, _ in first["value"]] == [0, 1, 4, 9, 16]
    assert first == second  # same value and hash in another process


async def _primitives() -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    out: dict[str, Any] = {}
    barrier = threading.Barrier(3)
    gate = threading.BoundedSemaphore(1)
    results: queue.Queue[int] = queue.Queue(maxsize=1)
    inside: list[int] = []

    def worker(i: int) -> None:
        barrier.wait()
        with gate:
            inside.append(i)
            time.sleep(0.01)
            inside.append(-i)
        results.put(i)

    for i in (1, 2, 3):
        threading.Thread(target=worker, args=(i,)).start()
    out["queue"] = await asyncio.to_thread(lambda: sorted(results.get() for _ in range(3)))
    out["one_at_a_time"] = all(inside[k] == -inside[k + 1] for k in range(0, 6, 2))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(lambda x: (time.sleep(0.1), x * x)[1], i) for i in range(4)]
        out["pool"] = await asyncio.to_thread(lambda: [f.result() for f in futures])

    async def double(x: int) -> int:
        await asyncio.sleep(0.5)
        return 2 * x

    out["from_thread"] = await asyncio.to_thread(
        lambda: asyncio.run_coroutine_threadsafe(double(21), loop).result(timeout=10)
    )
    began = loop.time()
    out["event_timed_out"] = not await asyncio.to_thread(threading.Event().wait, 2.0)
    out["waited"] = round(loop.time() - began, 2)

    def has_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    out["thread_has_loop"] = await asyncio.to_thread(has_loop)
    await loop.shutdown_default_executor()
    return out


def test_threading_queue_and_futures_primitives_switch_threads() -> None:
    runs = [seedbed.run(_primitives, seed=3) for _ in range(2)]
    assert runs[0].value == {
        "queue": [1, 2, 3],
        "one_at_a_time": True,
        "pool": [0, 1, 4, 9],
        "from_thread": 42,
        "event_timed_out": True,
        "waited": 2.0,
        "thread_has_loop": False,
    }
    assert runs[0].trace_hash == runs[1].trace_hash


def test_a_wait_on_the_loops_thread_that_nothing_can_answer_is_a_deadlock() -> None:
    async def main() -> None:
        threading.Event().wait()

    with pytest.raises(Deadlock, match="the event loop's thread waits for a notify"):
        seedbed.run(main, seed=0)


def test_a_runner_closing_after_thread_work_reports_no_thread_error() -> None:
    """`asyncio.Runner.close` shuts the default executor down from a thread of its
    own; the loop stops once that thread's result is in, and ending the thread
    there is no error of the program's."""
    errors: list[str] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(f"{args.thread}: {args.exc_value!r}")
    try:
        for seed in range(20):  # the seed picks whether the loop stops first
            factory = functools.partial(seedbed.new_event_loop, seed)
            with asyncio.Runner(loop_factory=factory) as runner:
                assert runner.run(asyncio.to_thread(sum, [1, 2, 3])) == 6
    finally:
        threading.excepthook = hook
    assert errors == []


def test_a_pool_made_before_the_run_runs_its_work_as_simulated_threads() -> None:
    """A module's pool (asgiref's `sync_to_async` one, made at import) has a C
    queue; in a run its work goes to a pool made in the run with its settings,
    so one worker at a time, named after the pool, on virtual time, and the
    pool itself still works outside the run."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="module")

    def work(i: int) -> tuple[int, str, float]:
        time.sleep(1)
        return i, threading.current_thread().name, time.monotonic()

    async def main() -> list[tuple[int, str, float]]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        done = await asyncio.gather(*(loop.run_in_executor(pool, work, i) for i in range(3)))
        return [(i, name, round(at - start)) for i, name, at in done]

    runs = [seedbed.run(main, seed=2) for _ in range(2)]
    assert runs[0].value == [(0, "module_0", 1), (1, "module_0", 2), (2, "module_0", 3)]
    assert runs[0].trace_hash == runs[1].trace_hash
    assert pool.submit(abs, -5).result(timeout=10) == 5  # a real worker, outside the run
    pool.shutdown()


def test_a_thread_ended_at_the_loops_close_inside_a_condition_wait_reports_no_error() -> None:
    """The loop closes while a thread stands at the switch before retaking a
    condition's lock (Starlette's anyio worker threads): the exit lands there,
    the `with` around the wait releases a lock the thread no longer holds, and
    that "cannot release un-acquired lock" is the exit's, not the program's."""
    errors: list[str] = []
    hook = threading.excepthook
    threading.excepthook = lambda args: errors.append(f"{args.thread}: {args.exc_value!r}")

    async def main() -> None:
        cond = threading.Condition()

        def poll() -> None:
            with cond:
                while True:
                    cond.wait(0)

        threading.Thread(target=poll, daemon=True).start()
        for _ in range(5):
            await asyncio.sleep(0)

    try:
        for seed in range(3):  # seeds 0 and 2 stop the loop with the thread at that switch
            loop = seedbed.new_event_loop(seed=seed)
            loop.run_until_complete(main())
            loop.close()
    finally:
        threading.excepthook = hook
    assert errors == []


_NESTED_POOLS = textwrap.dedent(
    """
    import asyncio, concurrent.futures, json, seedbed

    async def main():
        def outer(i):  # each thread submits to a pool of its own
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                return sum(pool.submit(abs, -j).result() for j in range(3)) + i
        return await asyncio.gather(*(asyncio.to_thread(outer, i) for i in range(4)))

    print(json.dumps([seedbed.run(main, seed=seed).value for seed in range(10)]))
    """
)


def test_threads_submitting_to_pools_at_once_never_hang_the_process() -> None:
    """`submit` holds concurrent.futures' module lock (made at import: a real
    one) across the pool's own lock, a switch point; a second thread's submit
    then blocked the OS thread for good. In a subprocess: a hang fails, not stalls."""
    done = subprocess.run(
        [sys.executable, "-c", _NESTED_POOLS],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
        check=True,
    )
    assert json.loads(done.stdout) == [[3, 4, 5, 6]] * 10
