"""Callback and timer order, sleeps and the loop clock, task start-up."""

from __future__ import annotations

import asyncio
from typing import Any

TOLERANCE = 1e-6  # the stock loop fires a timer up to its clock resolution early


def test_call_soon_callbacks_run_in_the_order_scheduled(run: Any) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        order: list[str] = []

        def first(i: int) -> None:
            order.append(f"a{i}")
            loop.call_soon(order.append, f"b{i}")  # behind every a: FIFO

        for i in range(20):
            loop.call_soon(first, i)
        done = loop.create_future()
        loop.call_soon(loop.call_soon, done.set_result, None)
        await done
        return order

    assert run(main) == [f"a{i}" for i in range(20)] + [f"b{i}" for i in range(20)]


def test_call_soon_keeps_its_order_when_interleaved_with_zero_delay_timers(run: Any) -> None:
    async def main() -> list[tuple[str, int]]:
        loop = asyncio.get_running_loop()
        order: list[tuple[str, int]] = []
        for i in range(10):
            loop.call_soon(order.append, ("soon", i))
            loop.call_later(0, order.append, ("later", i))
        await asyncio.sleep(0.01)
        return order

    order = run(main)
    assert [i for kind, i in order if kind == "soon"] == list(range(10))
    assert sorted(i for kind, i in order if kind == "later") == list(range(10))


def test_timers_with_different_deadlines_fire_in_deadline_order(run: Any) -> None:
    delays = [0.03, 0.01, 0.05, 0.02, 0.04, 0.015]

    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        fired: list[float] = []
        for delay in delays:
            loop.call_later(delay, fired.append, delay)
        loop.call_at(loop.time() + 0.025, fired.append, 0.025)
        await asyncio.sleep(0.06)
        return fired

    assert run(main) == sorted([*delays, 0.025])


def test_a_cancelled_timer_never_fires(run: Any) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        fired: list[str] = []
        keep = loop.call_later(0.01, fired.append, "kept")
        drop = loop.call_later(0.005, fired.append, "dropped")
        drop.cancel()
        await asyncio.sleep(0.02)
        assert drop.cancelled() and not keep.cancelled()
        return fired

    assert run(main) == ["kept"]


def test_sleeping_tasks_wake_in_deadline_order(run: Any) -> None:
    async def main() -> list[float]:
        woke: list[float] = []

        async def sleeper(delay: float) -> None:
            await asyncio.sleep(delay)
            woke.append(delay)

        await asyncio.gather(sleeper(0.03), sleeper(0.01), sleeper(0.02))
        return woke

    assert run(main) == [0.01, 0.02, 0.03]


def test_loop_time_advances_by_at_least_the_slept_delay(run: Any) -> None:
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        elapsed = []
        for delay in (0.01, 0.003, 0.02):
            before = loop.time()
            await asyncio.sleep(delay)
            elapsed.append(loop.time() - before - delay)
        return elapsed

    assert all(extra >= -TOLERANCE for extra in run(main))


def test_loop_time_never_goes_backwards(run: Any) -> None:
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        seen = [loop.time()]
        for delay in (0, 0.001, 0, 0.002, 0):
            await asyncio.sleep(delay)
            seen.append(loop.time())
        return seen

    seen = run(main)
    assert seen == sorted(seen)


def test_a_created_task_has_started_after_one_sleep_zero(run: Any) -> None:
    async def main() -> tuple[list[int], list[int]]:
        started: list[int] = []

        async def child(i: int) -> None:
            started.append(i)
            await asyncio.sleep(0.01)

        tasks = [asyncio.create_task(child(i)) for i in range(5)]
        before = list(started)
        await asyncio.sleep(0)
        after = list(started)
        await asyncio.gather(*tasks)
        return before, after

    assert run(main) == ([], [0, 1, 2, 3, 4])


def test_future_done_callbacks_run_in_registration_order(run: Any) -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        order: list[int] = []
        future = loop.create_future()
        for i in range(10):
            future.add_done_callback(lambda _f, i=i: order.append(i))
        future.set_result(None)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return order

    assert run(main) == list(range(10))
