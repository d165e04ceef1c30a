"""The default exploration stays sound: orders every real loop keeps are kept.

Task order and the coarse clock are on by default (`seedbed.aio._explore`);
they must never produce an order no real asyncio loop shows on any I/O
timing. Each test below is a correct program that relies on one such order
and must pass every seed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import seedbed

SEEDS = range(150)


def every_seed(main: object, **options: object) -> set[object]:
    """The distinct results of `main` over `SEEDS` (each run must pass)."""
    return {seedbed.run(main, seed=seed, **options).value for seed in SEEDS}  # type: ignore[arg-type]


def test_waiters_woken_by_one_event_set_resume_in_the_order_they_waited() -> None:
    async def main() -> tuple[str, ...]:
        event = asyncio.Event()
        resumed: list[str] = []

        async def waiter(name: str) -> None:
            await event.wait()
            resumed.append(name)

        tasks = []
        for name in "abcde":
            tasks.append(asyncio.create_task(waiter(name)))
            await asyncio.sleep(0)  # each waits before the next starts
        event.set()
        await asyncio.gather(*tasks)
        return tuple(resumed)

    assert every_seed(main) == {tuple("abcde")}


def test_tasks_awaiting_one_future_resume_in_the_order_they_awaited() -> None:
    async def main() -> tuple[int, ...]:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        resumed: list[int] = []

        async def awaiter(number: int) -> None:
            await future
            resumed.append(number)

        tasks = [asyncio.create_task(awaiter(number)) for number in range(4)]
        await asyncio.sleep(0.01)
        future.set_result(1)
        await asyncio.gather(*tasks)
        return tuple(resumed)

    assert every_seed(main) == {(0, 1, 2, 3)}


def test_tasks_created_by_one_callback_start_in_creation_order() -> None:
    async def main() -> tuple[int, ...]:
        started: list[int] = []

        async def job(number: int) -> None:
            started.append(number)

        await asyncio.gather(*(job(number) for number in range(5)))
        return tuple(started)

    assert every_seed(main) == {(0, 1, 2, 3, 4)}


def test_a_lock_hands_over_in_fifo_order() -> None:
    async def main() -> tuple[int, ...]:
        lock = asyncio.Lock()
        got: list[int] = []

        async def worker(number: int) -> None:
            async with lock:
                got.append(number)
                await asyncio.sleep(0.001)

        await lock.acquire()
        tasks = []
        for number in range(4):
            tasks.append(asyncio.create_task(worker(number)))
            await asyncio.sleep(0)  # queued on the lock in this order
        lock.release()
        await asyncio.gather(*tasks)
        return tuple(got)

    assert every_seed(main) == {(0, 1, 2, 3)}


def test_timers_of_different_deadlines_wake_their_tasks_in_deadline_order() -> None:
    """Even when a late loop finds both due at once (a stall of up to 10 ms)."""

    async def main() -> tuple[str, ...]:
        woke: list[str] = []

        async def sleeper(name: str, delay: float) -> None:
            await asyncio.sleep(delay)
            woke.append(name)

        await asyncio.gather(sleeper("later", 0.0052), sleeper("sooner", 0.005))
        return tuple(woke)

    assert every_seed(main, timer_jitter_max=0.01) == {("sooner", "later")}


def test_a_coarse_clock_keeps_the_order_of_different_delays_set_in_one_tick() -> None:
    async def main() -> tuple[str, ...]:
        loop = asyncio.get_running_loop()
        fired: list[str] = []
        done = loop.create_future()
        loop.call_later(0.0006, fired.append, "b")
        loop.call_later(0.0005, fired.append, "a")
        loop.call_later(0.0007, done.set_result, None)
        await done
        return tuple(fired)

    assert every_seed(main) == {("a", "b")}
    assert every_seed(main, clock_resolution=0.0156) == {("a", "b")}


def test_two_tasks_arming_one_timeout_a_callback_apart_may_fire_either_way() -> None:
    """The relaxation itself: within one tick of a coarse clock, which of two
    equal timeouts fires first is drawn (and never decided by set order)."""

    async def main() -> str:
        first_to_fire: list[str] = []

        async def arm(name: str) -> None:
            await asyncio.sleep(0.010)
            first_to_fire.append(name)

        first = asyncio.create_task(arm("first"))
        await asyncio.sleep(0)
        second = asyncio.create_task(arm("second"))
        await asyncio.gather(first, second)
        return first_to_fire[0]

    assert every_seed(main) == {"first", "second"}
    assert every_seed(main, clock_resolution=0) == {"first"}


def test_the_trace_header_records_the_default_exploration(tmp_path: Path) -> None:
    async def main() -> None:
        await asyncio.sleep(0)

    path = tmp_path / "run.jsonl"
    seedbed.run(main, seed=3, trace=path)
    options = json.loads(path.read_text().splitlines()[0])["options"]
    assert options["explore_tasks"] is True and options["clock_resolution"] == 0.001
    seedbed.run(main, seed=3, trace=path, explore_tasks=False, clock_resolution=0)
    options = json.loads(path.read_text().splitlines()[0])["options"]
    assert options["explore_tasks"] is False and options["clock_resolution"] == 0


def _yielders_order(count: int) -> object:
    """A program whose `count` tasks yield together, then record who ran first."""

    async def main() -> tuple[int, ...]:
        ran: list[int] = []

        async def yielder(number: int) -> None:
            await asyncio.sleep(0)  # every task is ready again, each from its own step
            ran.append(number)

        await asyncio.gather(*(yielder(number) for number in range(count)))
        return tuple(ran)

    return main


def test_a_large_batch_of_yielders_puts_any_pair_either_way_and_any_three_in_six_orders() -> None:
    # 40 steps ready together take the large-batch order (a turn, a reversal
    # and one shuffled window): cheaper than a uniform permutation, and still
    # every pair comes both ways and any three in all six orders.
    orders = every_seed(_yielders_order(40))
    assert all(sorted(order) == list(range(40)) for order in orders)  # type: ignore[arg-type]
    for a, b in ((0, 1), (0, 39), (12, 27)):
        firsts = {order.index(a) < order.index(b) for order in orders}  # type: ignore[attr-defined]
        assert firsts == {True, False}, (a, b)
    triple = {tuple(sorted((0, 20, 39), key=order.index)) for order in orders}  # type: ignore[attr-defined]
    assert len(triple) == 6


def test_a_large_batch_keeps_the_start_order_of_tasks_one_gather_created() -> None:
    async def main() -> tuple[int, ...]:
        started: list[int] = []

        async def starter(number: int) -> None:
            started.append(number)  # each task's first step: all from the gather's one step

        await asyncio.gather(*(starter(number) for number in range(40)))
        return tuple(started)

    assert every_seed(main) == {tuple(range(40))}


def test_the_in_place_turn_draws_and_orders_as_the_index_order_does() -> None:
    # Two implementations of the large-batch order (inside the deque, for a
    # batch of steps only; as indices, for a mixed batch) must agree.
    from collections import deque

    from seedbed._core import Entropy, Trace
    from seedbed.aio._explore import _large_order, _turn_in_place

    for seed in range(60):
        as_indices = _large_order(40, Entropy(seed, Trace()).stream("loop"))
        in_place = deque(range(40))
        _turn_in_place(in_place, Entropy(seed, Trace()).stream("loop"))
        assert list(in_place) == as_indices


async def _yield_spawn_and_wake() -> tuple[object, ...]:
    """Batches of lone steps (yielders) next to every way a batch stops being
    one: two tasks started by one step, plain callbacks, wakeups, a cancelled
    handle, a timer, tasks one event wakes; and the batches the loop still
    knows without a scan: wakeups each from its own cause with sleeps' timers
    tied behind them (on the 1 ms clock), several tasks woken by one step."""
    loop = asyncio.get_running_loop()
    log: list[object] = []
    event = asyncio.Event()
    bells = [asyncio.Event() for _ in range(5)]

    async def yielder(number: int, rounds: int) -> None:
        for round_ in range(rounds):
            log.append((number, round_))
            await asyncio.sleep(0)
            if round_ == 2 and number % 7 == 0:  # two new tasks' first steps: one cause
                await asyncio.gather(asyncio.sleep(0), asyncio.sleep(0))
            if round_ == 3 and number % 5 == 0:
                loop.call_soon(log.append, ("plain", number))
                loop.call_soon(log.append, "never").cancel()
            if round_ == 4 and number % 9 == 0:
                await asyncio.sleep(0.002)
            if round_ == 5 and number % 3 == 0:  # sleeps that tie on the 1 ms clock
                await asyncio.sleep(0.0004)
            if round_ == 6 and number < len(bells):  # one step wakes three listeners
                bells[number].set()

    async def waiter(number: int) -> None:
        await event.wait()
        log.append(("woken", number))

    async def listener(number: int) -> None:
        await bells[number % len(bells)].wait()
        log.append(("rung", number))

    async def spinner() -> None:  # ready while the sleeps' timers come due
        while not event.is_set():
            await asyncio.sleep(0)

    waiters = [asyncio.create_task(waiter(number)) for number in range(6)]
    listeners = [asyncio.create_task(listener(number)) for number in range(15)]
    spinners = [asyncio.create_task(spinner()) for _ in range(3)]
    await asyncio.gather(*(yielder(number, 8) for number in range(30)))
    event.set()
    await asyncio.gather(*waiters, *listeners, *spinners)
    return tuple(log)


def test_the_scan_free_paths_order_as_the_scan_does(monkeypatch: object) -> None:
    # A queue the loop knows (from its counts) holds task steps and wakeups
    # only, maybe with sleeps' timers behind them, is reordered without a
    # scan: each from its own cause (`reorder_lone_steps`), or some queued
    # by one callback (`reorder_task_runs`). With that knowledge taken away
    # (no step or C method type to count by) every batch is scanned. Both
    # must draw and order alike, or trace hashes would depend on which path ran.
    import pytest

    from seedbed.aio import loop as loop_module

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    taken: list[str] = []
    lone, runs = loop_module.reorder_lone_steps, loop_module.reorder_task_runs

    def counted_lone(queue: Any, tasks: int, sched: Any) -> None:
        taken.append("lone" if tasks == len(queue) else "lone, sleeps behind")
        lone(queue, tasks, sched)

    def counted_runs(queue: Any, tasks: int, causes: int, sched: Any) -> None:
        taken.append("runs")
        runs(queue, tasks, causes, sched)

    monkeypatch.setattr(loop_module, "reorder_lone_steps", counted_lone)
    monkeypatch.setattr(loop_module, "reorder_task_runs", counted_runs)
    fast = [seedbed.run(_yield_spawn_and_wake, seed=seed) for seed in range(12)]
    assert set(taken) == {"lone", "lone, sleeps behind", "runs"}, "every scan-free path ran"
    monkeypatch.setattr(loop_module, "STEP_TYPE", None)
    monkeypatch.setattr(loop_module, "C_METHOD", type("NoCallbackHasThisType", (), {}))
    taken.clear()
    scanned = [seedbed.run(_yield_spawn_and_wake, seed=seed) for seed in range(12)]
    assert not taken
    assert [(r.trace_hash, r.value) for r in fast] == [(r.trace_hash, r.value) for r in scanned]
    assert len({r.value for r in fast}) > 1  # the seeds do explore


def _echo_world(sim: seedbed.Simulation) -> None:
    """Three hosts in echo round trips over streams, `wait_for` on each read:
    the networked world whose lane batches are mostly pairs from one cause."""
    hosts = ("h1", "h2", "h3")

    async def host() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)

        await asyncio.start_server(echo, "0.0.0.0", 6000)
        await asyncio.sleep(0.01)
        me = seedbed.current_node()
        while True:
            for other in hosts:
                if other != me:
                    reader, writer = await asyncio.open_connection(other, 6000)
                    for _ in range(5):
                        writer.write(b"ping\n")
                        assert await asyncio.wait_for(reader.readline(), 1.0) == b"ping\n"
                    writer.close()
            await asyncio.sleep(0.01)

    for name in hosts:
        sim.host(name, host)


def test_a_pair_from_one_cause_skips_the_scan_and_orders_as_the_scan_does(
    monkeypatch: object,
) -> None:
    # The loop tells a batch of two handles one callback queued (a task's
    # done callbacks) from its causes alone and skips the scan, and draws a
    # pair from two causes without it (`reorder_pair`); with that check off
    # (PAIR = 0) every such batch is scanned. Both must draw and order
    # alike, or trace hashes would depend on which path ran.
    import pytest

    from seedbed.aio import loop as loop_module

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    scanned: list[int] = []
    scan, pair = loop_module.reorder_task_steps, loop_module.reorder_pair

    def counted(queue: object, n: int, *rest: object) -> None:
        scanned.append(n)
        scan(queue, n, *rest)  # type: ignore[arg-type]

    def counted_pair(queue: object, sched: object) -> None:
        scanned.append(-2)  # a pair from two causes, drawn without the scan
        pair(queue, sched)  # type: ignore[arg-type]

    monkeypatch.setattr(loop_module, "reorder_task_steps", counted)
    monkeypatch.setattr(loop_module, "reorder_pair", counted_pair)
    scenario = seedbed.Scenario("pairs", _echo_world, duration=0.3)
    fast = [scenario.run(seed=seed) for seed in range(4)]  # a failing run raises
    with_check = list(scanned)
    monkeypatch.setattr(loop_module, "PAIR", 0)
    scanned.clear()
    slow = [scenario.run(seed=seed) for seed in range(4)]
    assert [(r.trace_hash, r.steps) for r in fast] == [(r.trace_hash, r.steps) for r in slow]
    assert scanned.count(2) > 10 * with_check.count(2), "most pairs are one cause's and skip"
    assert -2 in with_check, "a pair from two causes still draws, on its own path"
    assert -2 not in scanned, "with the check off every pair is scanned"


def test_a_batch_from_one_cause_keeps_its_order_and_draws_nothing() -> None:
    # Task callbacks of different tasks, plain callbacks among them: queued
    # by one callback, they run in its order and nothing is drawn; the same
    # batch from two causes is reordered (so these are steps to order).
    from collections import deque
    from functools import partial

    from seedbed._core import Entropy, Trace
    from seedbed.aio._explore import reorder_task_steps
    from seedbed.aio._handles import SimHandle

    async def main() -> list[list[int]]:
        loop = asyncio.get_running_loop()
        tasks = [asyncio.create_task(asyncio.sleep(1)) for _ in range(4)]
        callbacks = [*(task.cancel for task in tasks), partial(print), print]
        orders = []
        for seed in range(20):
            for causes in ([7] * 6, [7, 8, 7, 8, 7, 8]):
                queue: deque[SimHandle] = deque()
                for callback, cause in zip(callbacks, causes, strict=True):
                    handle = SimHandle(callback, (), loop, None)
                    handle.cause = cause
                    queue.append(handle)
                trace = Trace()
                reorder_task_steps(queue, len(queue), Entropy(seed, trace).stream("loop"), None)
                order = [callbacks.index(handle._callback) for handle in queue]
                if causes == [7] * 6:
                    assert (order, trace.count) == ([0, 1, 2, 3, 4, 5], 0)
                else:
                    orders.append(order)
        for task in tasks:
            task.cancel()
        return orders

    orders = seedbed.run(main, seed=0).value
    assert len({tuple(order) for order in orders}) > 1
