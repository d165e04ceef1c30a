"""The world's own waits: an exact sleep that is cancelled never fires and leaves the
heap, and a simulated disk's operation lasts the latency it drew."""

from __future__ import annotations

import asyncio

import pytest

import seedbed
from seedbed.aio import LoopConfig, SeedbedLoop

_EXACT = LoopConfig(cpu_cost_min=0.0, cpu_cost_max=0.0)  # no callback cost: times are exact


def live_timers(loop: SeedbedLoop) -> list[float]:
    """Deadlines of the timers still due to fire (cancelled ones may linger in the heap)."""
    return [entry[0] / 1e9 for entry in loop._st.timers if not entry[2]._cancelled]


def test_a_cancelled_exact_sleep_wakes_its_task_now_and_its_timer_never_fires() -> None:
    loop = SeedbedLoop(seed=3, config=_EXACT)
    seen: list[tuple[str, float]] = []

    async def sleeper() -> None:
        try:
            await loop.driver.sleep(10.0)
        except asyncio.CancelledError:
            seen.append(("cancelled", loop.time()))
            raise
        seen.append(("woke", loop.time()))

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(sleeper())
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    loop.run_until_complete(main())
    assert seen == [("cancelled", 0.5)]
    assert live_timers(loop) == []  # the 10 s timer is cancelled, not waiting to fire
    loop.run_until_complete(asyncio.sleep(20.0))  # past its deadline: nothing fires
    assert seen == [("cancelled", 0.5)]
    assert loop._st.timers == [] and loop._st.cancelled_timers == 0  # and it left the heap
    loop.close()


def test_an_exact_sleep_that_fired_leaves_nothing_in_the_heap() -> None:
    loop = SeedbedLoop(seed=3, config=_EXACT)
    loop.run_until_complete(loop.driver.sleep(0.25))
    assert loop.time() == 0.25
    assert loop._st.timers == [] and loop._st.cancelled_timers == 0
    loop.close()


def test_a_disk_operation_lasts_its_drawn_latency() -> None:
    """Each operation's latency is one draw in [latency_min, latency_max], and the
    write takes exactly the drawn time (callbacks cost nothing here)."""
    disk = seedbed.DiskConfig(latency_min=0.001, latency_max=0.002)
    sim = seedbed.Simulation(seed=5, disk=disk, cpu_cost_min=0.0, cpu_cost_max=0.0)
    spent: list[float] = []

    async def client() -> None:
        loop = asyncio.get_running_loop()
        async with await seedbed.fs.open("/f", "wb") as file:
            for _ in range(5):
                started = loop.time()
                await file.write(b"x")
                spent.append(loop.time() - started)

    sim.client("c1", client)
    result = sim.run(max_time=5.0)
    assert result.values["c1"] is None
    assert len(spent) == 5 and len(set(spent)) == 5  # five draws, five latencies
    assert all(0.001 <= s < 0.002 + 1e-9 for s in spent)


def test_a_disk_write_cut_by_a_timeout_ends_then_and_cancels_its_latency_timer() -> None:
    """The disk awaits its latency in its own frame: cancelled first, it cancels the timer."""
    disk = seedbed.DiskConfig(latency_min=1.0, latency_max=1.0)
    sim = seedbed.Simulation(seed=5, disk=disk, cpu_cost_min=0.0, cpu_cost_max=0.0)

    async def client() -> tuple[float, list[float]]:
        loop = asyncio.get_running_loop()
        async with await seedbed.fs.open("/f", "wb") as file:  # 1 s: the write starts at 1.0
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await file.write(b"x")
            assert isinstance(loop, SeedbedLoop)
            return loop.time(), live_timers(loop)

    sim.client("c1", client)
    ended, timers = sim.run(max_time=5.0).values["c1"]
    assert ended == pytest.approx(1.5, abs=0.002)
    assert not [deadline for deadline in timers if 1.9 < deadline < 2.1]  # the write's, at 2.0
