"""The deterministic loop's own promises: virtual time, exploration, budgets, diagnostics."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import warnings

import pytest

import seedbed
from seedbed import (
    BudgetExceeded,
    CancellationSwallowed,
    Deadlock,
    SeedbedWarning,
    SimulationEscape,
)


def run(main, seed: int = 0, **options):  # type: ignore[no-untyped-def]
    return seedbed.run(main, seed=seed, **options)


# -- virtual time ----------------------------------------------------------------


def test_a_day_long_sleep_takes_a_day_of_virtual_time_and_no_wall_time() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(86400)
        return loop.time() - start

    wall = time.perf_counter()
    result = run(main)
    # Waited for real it would take 86,400 s: a bound far below that shows the
    # sleep was skipped; a tight one would measure only the machine's load.
    assert time.perf_counter() - wall < 60.0
    assert result.steps < 20  # one timer, jumped to: no polling through the day
    assert 86400 <= result.value < 86400.01
    assert result.virtual_time >= 86400


def test_every_callback_costs_virtual_time_so_a_spin_loop_reaches_its_timeout() -> None:
    async def main() -> tuple[int, float]:
        loop = asyncio.get_running_loop()
        spins = 0
        start = loop.time()
        try:
            async with asyncio.timeout(1.0):
                while True:
                    await asyncio.sleep(0)
                    spins += 1
        except TimeoutError:
            return spins, loop.time() - start
        raise AssertionError("unreachable")

    spins, elapsed = run(main).value
    assert 1.0 <= elapsed < 1.01
    assert 100_000 < spins < 1_000_000  # 1-5 us of virtual CPU per callback


def test_cpu_cost_is_configurable_and_zero_cost_freezes_time_between_timers() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        for _ in range(100):
            await asyncio.sleep(0)
        return loop.time()

    assert run(main, cpu_cost_min=0.0, cpu_cost_max=0.0).value == 0.0
    assert run(main, cpu_cost_min=1e-3, cpu_cost_max=1e-3).value == pytest.approx(0.101)


# -- exploration -----------------------------------------------------------------


def order_of_same_instant_timers(seed: int) -> tuple[int, ...]:
    async def main() -> tuple[int, ...]:
        loop = asyncio.get_running_loop()
        fired: list[int] = []
        deadline = loop.time() + 1.0
        for i in range(4):
            loop.call_at(deadline, fired.append, i)
        await asyncio.sleep(2)
        return tuple(fired)

    return run(main, seed=seed).value  # type: ignore[no-any-return]


def test_timers_due_at_the_same_instant_fire_in_an_order_drawn_from_the_seed() -> None:
    orders = {order_of_same_instant_timers(seed) for seed in range(40)}
    assert len(orders) > 5
    assert all(sorted(order) == [0, 1, 2, 3] for order in orders)
    assert order_of_same_instant_timers(7) == order_of_same_instant_timers(7)


def test_call_soon_stays_fifo_under_every_seed() -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        seen: list[int] = []
        for i in range(50):
            loop.call_soon(seen.append, i)
        await asyncio.sleep(0.1)
        return seen

    for seed in range(20):
        assert run(main, seed=seed).value == list(range(50))


def test_timer_jitter_makes_timers_late_but_never_early_and_keeps_deadline_order() -> None:
    async def main() -> list[tuple[int, float, float]]:
        loop = asyncio.get_running_loop()
        fired: list[tuple[int, float, float]] = []
        for i in range(20):
            deadline = loop.time() + 0.01 * (i + 1)
            loop.call_at(deadline, lambda i=i, d=deadline: fired.append((i, d, loop.time())))
        await asyncio.sleep(1)
        return fired

    lateness = []
    for seed in range(10):
        fired = run(main, seed=seed, timer_jitter_max=0.005).value
        assert [i for i, _, _ in fired] == list(range(20))
        assert all(actual >= deadline for _, deadline, actual in fired)
        # the jitter, plus at most the default clock's 1 ms tick (a coarse clock reads late)
        assert all(actual - deadline <= 0.0061 for _, deadline, actual in fired)
        lateness += [actual - deadline for _, deadline, actual in fired]
    assert max(lateness) > 0.002  # the jitter is really used


def check_then_act(seed: int) -> int:
    async def main() -> int:
        stock = {"items": 1}
        sold = 0

        async def buyer() -> None:
            nonlocal sold
            if stock["items"] > 0:
                await seedbed.checkpoint("between check and act")
                stock["items"] -= 1
                sold += 1

        async def idle() -> None:
            await seedbed.checkpoint("elsewhere")

        await asyncio.gather(buyer(), idle(), buyer())
        return sold

    return run(main, seed=seed).value  # type: ignore[no-any-return]


def test_checkpoints_let_the_seed_choose_which_parked_task_resumes() -> None:
    outcomes = {check_then_act(seed) for seed in range(30)}
    assert outcomes == {2}  # both buyers checked before either acted: oversold every time

    async def main() -> list[str]:
        order: list[str] = []

        async def worker(name: str) -> None:
            await seedbed.checkpoint("race")
            order.append(name)

        await asyncio.gather(*(worker(name) for name in "abc"))
        return order

    orders = {tuple(run(main, seed=seed).value) for seed in range(30)}
    assert len(orders) >= 4


def test_checkpoint_outside_a_simulation_returns_at_once() -> None:
    async def main() -> str:
        await seedbed.checkpoint("production code keeps this")
        return "done"

    assert asyncio.run(main()) == "done"


def test_the_task_sets_asyncio_wait_returns_iterate_in_creation_order() -> None:
    async def main() -> list[str]:
        tasks = [asyncio.create_task(asyncio.sleep(0.01, f"t{i}"), name=f"t{i}") for i in range(30)]
        done, _ = await asyncio.wait(tasks)
        return [task.get_name() for task in done]

    for seed in range(3):
        assert run(main, seed=seed).value == [f"t{i}" for i in range(30)]


def test_executor_jobs_and_to_thread_run_inline_on_the_loop_thread_when_asked() -> None:
    async def main() -> tuple[int, int, int]:
        before = threading.active_count()
        ident = await asyncio.to_thread(threading.get_ident)
        value = await asyncio.get_running_loop().run_in_executor(None, sum, [1, 2, 3])
        return ident, value, threading.active_count() - before

    ident, value, new_threads = run(main, threads="inline").value
    assert ident == threading.get_ident()
    assert value == 6
    assert new_threads == 0


def test_executor_jobs_run_on_simulated_threads_by_default() -> None:
    async def main() -> tuple[int, int, int]:
        before = threading.active_count()
        ident = await asyncio.to_thread(threading.get_ident)
        value = await asyncio.get_running_loop().run_in_executor(None, sum, [1, 2, 3])
        return ident, value, threading.active_count() - before

    ident, value, new_threads = run(main).value
    assert ident != threading.get_ident()
    assert value == 6
    assert new_threads == 0  # no OS thread


def test_a_step_budget_spent_while_spinning_is_reported_as_a_livelock() -> None:
    async def main() -> None:
        while True:
            await asyncio.sleep(0)

    with pytest.raises(BudgetExceeded) as caught:
        run(main, seed=3, max_steps=5000)
    error = caught.value
    assert error.time_advancing is False
    assert "livelock" in str(error)
    assert "max_steps=5000" in str(error)
    assert error.seed == 3
    assert "replay: seedbed.run(" in str(error) and "seed=3, max_steps=5000)" in str(error)


def test_a_step_budget_spent_while_sleeping_says_time_was_still_advancing() -> None:
    async def main() -> None:
        while True:
            await asyncio.sleep(1)

    with pytest.raises(BudgetExceeded) as caught:
        run(main, max_steps=5000)
    assert caught.value.time_advancing is True
    assert "still advancing" in str(caught.value)


def test_a_virtual_time_budget_stops_the_run_at_that_time() -> None:
    async def main() -> None:
        await asyncio.sleep(3600)

    with pytest.raises(BudgetExceeded) as caught:
        run(main, max_time=60.0)
    assert "max_time=60.0s" in str(caught.value)
    assert caught.value.context is not None
    assert caught.value.context.virtual_time_ns == 60 * 10**9


async def _waits_forever(queue: asyncio.Queue[int]) -> None:
    await queue.get()  # the line a deadlock report must name


def test_a_deadlock_names_every_waiting_task_and_the_line_it_waits_at() -> None:
    async def main() -> None:
        queue: asyncio.Queue[int] = asyncio.Queue()
        await asyncio.gather(
            asyncio.create_task(_waits_forever(queue), name="consumer-1"),
            asyncio.create_task(_waits_forever(queue), name="consumer-2"),
        )

    with pytest.raises(Deadlock) as caught:
        run(main, seed=11)
    message = str(caught.value)
    assert "consumer-1: waits at" in message and "consumer-2: waits at" in message
    assert f"test_loop.py:{_waits_forever.__code__.co_firstlineno + 1} in _waits_forever" in message
    assert "replay: " in message and "seed=11" in message


def test_a_task_that_swallows_its_cancellation_is_reported() -> None:
    async def main() -> None:
        async def stubborn() -> str:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                pass
            return "carried on"

        task = asyncio.create_task(stubborn(), name="stubborn")
        await asyncio.sleep(1)
        task.cancel()
        await asyncio.sleep(1)

    with pytest.warns(SeedbedWarning, match="'stubborn' caught its cancellation"):
        run(main)
    with pytest.raises(CancellationSwallowed, match="stubborn"):
        run(main, strict=True)


def test_a_cancelled_task_still_running_at_the_end_is_reported() -> None:
    async def main() -> None:
        async def deaf() -> None:
            while True:
                try:
                    await asyncio.sleep(1)
                except asyncio.CancelledError:
                    continue

        task = asyncio.create_task(deaf(), name="deaf")
        await asyncio.sleep(1)
        task.cancel()
        await asyncio.sleep(5)

    with pytest.raises(CancellationSwallowed, match="'deaf' was cancelled but is still running"):
        run(main, strict=True)


def test_cancellation_handled_properly_is_not_reported() -> None:
    async def main() -> None:
        async def polite() -> None:
            try:
                await asyncio.sleep(10)
            finally:
                await asyncio.sleep(0.1)  # cleanup may await, then the cancel propagates

        task = asyncio.create_task(polite())
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        async with asyncio.timeout(0.5):
            await asyncio.sleep(0.1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(main, strict=True)


# -- the world outside -----------------------------------------------------------


def test_network_calls_are_refused_without_a_simulated_world() -> None:
    async def main() -> None:
        await asyncio.open_connection("example.com", 80)

    with pytest.raises(SimulationEscape, match="create_connection"):
        run(main)


def test_a_real_socket_inside_a_run_escapes_even_if_the_code_catches_it() -> None:
    async def main() -> str:
        with socket.socket() as sock:  # creating a socket is allowed; connecting is not
            try:
                sock.connect(("127.0.0.1", 9))
            except Exception:
                pass  # the escape must not vanish with the exception
        await asyncio.sleep(1)
        return "finished"

    with pytest.raises(SimulationEscape, match="socket"):
        run(main)


def test_blocking_sleep_inside_a_run_escapes_and_names_the_alternative() -> None:
    async def main() -> None:
        time.sleep(0.01)

    with pytest.raises(SimulationEscape, match=r"asyncio\.sleep"):
        run(main)


def test_clocks_and_randomness_read_the_simulation_and_are_restored_after() -> None:
    import random

    async def main() -> tuple[float, float, float]:
        await asyncio.sleep(10)
        return time.monotonic(), time.time(), random.random()

    state = random.getstate()
    first = run(main, seed=5).value
    assert run(main, seed=5).value == first
    assert run(main, seed=6).value[2] != first[2]
    assert first[0] == pytest.approx(10, abs=0.01)
    assert first[1] == pytest.approx(1_704_067_210, abs=0.01)  # 2024-01-01 + 10 s
    assert random.getstate() == state
    assert abs(time.time() - 1_704_067_210) > 86400  # real clock again
