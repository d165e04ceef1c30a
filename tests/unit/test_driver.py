"""The loop's driver face and its one scheduler: lanes are a pick step, and a
world that puts every callback in one lane runs exactly as the plain loop does."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

import seedbed
from seedbed import Simulation, SimulatorBug
from seedbed.aio import LoopConfig, SeedbedLoop


class _Lane:
    """A lane as a world makes one: an object with `alive`."""

    def __init__(self) -> None:
        self.alive = True


async def _busy_program() -> tuple[int, list[str]]:
    """Tasks that sleep(0), sleep, hand work over a queue and cancel timers:
    batches of many callbacks, single wakeups, cancelled handles."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[int] = asyncio.Queue()
    order: list[str] = []
    total = 0

    async def producer(name: str, count: int) -> None:
        for i in range(count):
            await asyncio.sleep(0)
            await queue.put(i)
            if i % 3 == 0:
                await asyncio.sleep(0.001 * (i % 5))
        order.append(name)

    async def consumer() -> None:
        nonlocal total
        while True:
            total += await queue.get()
            queue.task_done()

    spare = [loop.call_later(0.5, order.append, "never") for _ in range(5)]
    for handle in spare:
        handle.cancel()
    worker = asyncio.create_task(consumer())
    await asyncio.gather(*(producer(f"p{k}", 10 + k) for k in range(8)))
    await queue.join()
    worker.cancel()
    return total, order


def _run(lane_var: contextvars.ContextVar[Any] | None, **options: Any) -> tuple[Any, ...]:
    loop = SeedbedLoop(seed=11, config=LoopConfig(**options))
    steps_after: list[int] = []
    loop.driver.after_node_step = lambda: steps_after.append(loop.steps)
    if lane_var is not None:
        loop.driver.enable_lanes(lane_var)
    try:
        value = loop.run_until_complete(_busy_program())
    finally:
        loop.close()
    return value, loop.trace.hash, loop.steps, loop.clock.now, steps_after


@pytest.mark.parametrize("explore", [False, True])
def test_one_lane_runs_exactly_as_the_plain_loop(explore: bool) -> None:
    plain = _run(None, explore_tasks=explore)
    lane_var: contextvars.ContextVar[Any] = contextvars.ContextVar("lane", default=None)
    # Every callback in the world's own lane (the variable is never set) ...
    assert _run(lane_var, explore_tasks=explore)[:4] == plain[:4]
    # ... or in one node's lane, which also calls the after-step hook exactly
    # where the plain loop does.
    in_one_node = contextvars.copy_context()
    in_one_node.run(lane_var.set, _Lane())
    assert in_one_node.run(_run, lane_var, explore_tasks=explore) == plain
    assert plain[4], "the hook ran"


def test_a_world_gives_the_same_values_with_and_without_node_lanes() -> None:
    """Interleaving changes which node runs when, never what this workload computes."""

    def world(interleave: bool) -> dict[str, Any]:
        sim = Simulation(seed=5, interleave=interleave)
        shared: dict[str, int] = {}

        async def server() -> None:
            async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                while line := await reader.readline():
                    writer.write(str(int(line) * 2).encode() + b"\n")
                    await writer.drain()
                writer.close()

            server = await asyncio.start_server(handle, "server", 7000)
            async with server:
                await asyncio.sleep(3600)

        async def client() -> int:
            await asyncio.sleep(0.01)
            reader, writer = await asyncio.open_connection("server", 7000)
            total = 0
            for i in range(20):
                writer.write(f"{i}\n".encode())
                total += int(await reader.readline())
                await asyncio.sleep(0)
            writer.close()
            shared[seedbed.current_node()] = total
            return total

        sim.host("server", server)
        for name in ("c1", "c2", "c3"):
            sim.client(name, client)
        values = sim.run(max_time=60).values
        assert shared == values
        return values

    assert world(True) == world(False) == {"c1": 380, "c2": 380, "c3": 380}


def test_a_node_that_crashes_itself_mid_batch_runs_nothing_more_of_that_batch() -> None:
    ran: list[str] = []
    sim = Simulation(seed=2)

    async def victim() -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0.1)
        # Three callbacks ready together: one lane batch. The second crashes
        # this node; the third belongs to the dead incarnation and must not run.
        loop.call_soon(ran.append, "before")
        loop.call_soon(sim.crash, "victim")
        loop.call_soon(ran.append, "after")
        await asyncio.sleep(3600)

    async def watcher() -> str:
        await asyncio.sleep(1)
        return "done"

    sim.host("victim", victim)
    sim.client("watcher", watcher)
    assert sim.run(max_time=10).values == {"watcher": "done"}
    assert ran == ["before"]
    assert not sim.nodes.get("victim").up


def test_work_queued_in_lanes_when_a_world_stops_runs_when_it_advances_again() -> None:
    """`advance` stops the loop mid-way through the lanes' work; none of it is lost."""
    spins: dict[str, int] = {}

    async def spinner() -> None:
        me = seedbed.current_node()
        spins[me] = 0
        while True:
            await asyncio.sleep(0)
            spins[me] += 1

    sim = Simulation(seed=0)
    for name in ("a", "b", "c"):
        sim.host(name, spinner)
    for _ in range(10):
        before = dict(spins)
        sim.advance(0.001)
        assert all(spins[name] > before.get(name, -1) for name in ("a", "b", "c")), spins


# -- simulator contracts broken on purpose: a SimulatorBug with the seed -------------


def _fails_with_bug(main: Any, seed: int = 31) -> SimulatorBug:
    with pytest.raises(SimulatorBug) as caught:
        seedbed.run(main, seed=seed)
    assert caught.value.seed == seed
    assert caught.value.replay
    return caught.value


def test_moving_the_clock_backwards_is_a_simulator_bug_with_the_seed() -> None:
    async def main() -> None:
        await asyncio.sleep(1)
        asyncio.get_running_loop().clock.advance_to(0)  # type: ignore[attr-defined]

    bug = _fails_with_bug(main)
    assert "the clock never moves backwards" in str(bug)
    assert "to=0" in str(bug)


def test_a_timer_whose_heap_entry_fired_already_is_a_simulator_bug() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        handle = loop.call_later(1, print, "never")
        handle._scheduled = False  # type: ignore[attr-defined]  # as if it had fired
        await asyncio.sleep(2)

    assert "a timer fires once" in str(_fails_with_bug(main))


def test_a_heap_entry_that_lost_its_deadline_is_a_simulator_bug() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(1, print, "a")
        handle = loop.call_later(1, print, "b")
        handle.when_ns += 5  # type: ignore[attr-defined]
        await asyncio.sleep(2)

    assert "heap entry holds its deadline" in str(_fails_with_bug(main))


def test_timers_leaving_the_heap_out_of_order_is_a_simulator_bug() -> None:
    async def main() -> None:
        loop: Any = asyncio.get_running_loop()
        for delay in (1.0, 1.25, 1.5, 1.75):
            loop.call_later(delay, print, "tick")
        sleeping = asyncio.ensure_future(asyncio.sleep(9))
        await asyncio.sleep(0)  # the sleep's timer is in the heap now
        by_deadline = sorted(loop._st.timers)
        # A heap no longer: its root is later than a child, and popping it
        # yields the 1.25 s timer before the 1.0 s one.
        loop._st.timers[:] = [by_deadline[i] for i in (2, 1, 3, 0, 4)]
        await sleeping

    assert "timers leave the heap in deadline order" in str(_fails_with_bug(main))


def test_a_lane_ended_twice_is_a_simulator_bug() -> None:
    loop = SeedbedLoop(seed=4)
    lane = _Lane()
    assert loop.driver.end_lane(lane) == []
    with pytest.raises(SimulatorBug, match="a lane ends once"):
        loop.driver.end_lane(lane)
    loop.close()


def test_a_corrupt_trace_word_and_a_cost_request_for_nothing_are_simulator_bugs() -> None:
    loop: Any = SeedbedLoop(seed=4)
    loop.trace.word = -1
    with pytest.raises(SimulatorBug, match="one 64-bit word"):
        loop.trace.hash  # noqa: B018
    with pytest.raises(SimulatorBug, match="at least one callback"):
        loop._st.take_costs(0)
    loop.close()


def test_a_simulator_bug_in_a_world_names_its_seed_and_replay() -> None:
    async def client() -> None:
        await asyncio.sleep(1)
        asyncio.get_running_loop().clock.advance_to(5)  # type: ignore[attr-defined]  # fine
        try:
            asyncio.get_running_loop().clock.advance_to(1)  # type: ignore[attr-defined]
        except SimulatorBug:
            pass  # swallowed: the run fails anyway

    sim = Simulation(seed=8)
    sim.client("c1", client)
    with pytest.raises(SimulatorBug) as caught:
        sim.run(max_time=60)
    assert caught.value.seed == 8
    assert "Simulation(seed=8)" in (caught.value.replay or "")


def test_the_driver_sets_the_replay_label_and_the_time_budget() -> None:
    sim = Simulation(seed=3)
    driver = sim.loop.driver
    assert driver.replay.startswith("seedbed.Simulation(seed=3)")
    assert driver.lanes_enabled

    async def slow() -> None:
        await asyncio.sleep(10)

    sim.client("c1", slow)
    with pytest.raises(seedbed.BudgetExceeded, match="max_time=2"):
        sim.run(max_time=2)
    assert driver.config.max_time == 2
