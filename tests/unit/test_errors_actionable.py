"""Errors a user can act on (issue 11, item 6).

A budget error lists who waits where, a failed world run says where it got
to, the swallowed-cancellation warning points at the code and stays quiet
when the standard library did the swallowing, and helpers that read
BaseEventLoop's private attributes find them.
"""

from __future__ import annotations

import asyncio
import collections
import re
import threading
import warnings

import pytest

import seedbed
from seedbed import SeedbedWarning


async def _deadlock_beside_a_ticker() -> None:
    async def ticker() -> None:
        while True:
            await asyncio.sleep(1)

    ticking = asyncio.create_task(ticker(), name="ticker")
    await asyncio.Event().wait()  # nothing ever sets it
    ticking.cancel()


def test_budget_exceeded_lists_every_waiting_task_and_where() -> None:
    with pytest.raises(seedbed.BudgetExceeded) as info:
        seedbed.run(_deadlock_beside_a_ticker, seed=1, max_time=10)
    text = str(info.value)
    assert "2 task(s) wait" in text
    main_line = next(line for line in text.splitlines() if line.strip().startswith("main:"))
    assert re.search(r"test_errors_actionable\.py:\d+ in _deadlock_beside_a_ticker", main_line)
    assert "ticker: waits at" in text and "in ticker" in text


def test_a_timer_past_the_horizon_never_reads_max_time_none() -> None:
    async def main() -> None:
        await asyncio.sleep(1e200)  # finite, but past what virtual time can reach

    with pytest.raises(seedbed.BudgetExceeded) as info:
        seedbed.run(main, seed=1)
    text = str(info.value)
    assert "None" not in text
    assert "horizon" in text and "can never end" in text


def _world_that_deadlocks(seed: int) -> seedbed.Simulation:
    async def stuck() -> None:
        await asyncio.sleep(0.5)
        await asyncio.Event().wait()

    sim = seedbed.Simulation(seed=seed)
    sim.host("n1", stuck)
    sim.client("c1", stuck)
    return sim


def test_a_failed_simulation_run_carries_hash_steps_and_time() -> None:
    failures = []
    for _ in range(2):
        with pytest.raises(seedbed.Deadlock) as info:
            _world_that_deadlocks(3).run()
        failures.append(info.value)
    first, second = failures
    assert first.trace_hash is not None and re.fullmatch(r"[0-9a-f]{16}", first.trace_hash)
    assert first.steps is not None and first.steps > 0
    assert first.virtual_time is not None and first.virtual_time >= 0.5
    assert (first.trace_hash, first.steps, first.virtual_time) == (
        second.trace_hash,
        second.steps,
        second.virtual_time,
    )
    assert f"trace_hash={first.trace_hash}" in str(first)


def test_a_failed_client_assertion_notes_the_trace_hash() -> None:
    async def client() -> None:
        await asyncio.sleep(1)
        raise AssertionError("balance went negative")

    sim = seedbed.Simulation(seed=4)
    sim.client("c1", client)
    with pytest.raises(AssertionError) as info:
        sim.run()
    assert any("trace_hash=" in note for note in info.value.__notes__)


def test_swallowed_cancellation_warning_names_coroutine_node_and_line() -> None:
    async def swallower() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            pass  # the bug: carries on

    async def client() -> None:
        task = asyncio.create_task(swallower())
        await asyncio.sleep(1)
        task.cancel()
        await task

    sim = seedbed.Simulation(seed=5)
    sim.client("c1", client)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim.run()
    messages = [str(w.message) for w in caught if issubclass(w.category, SeedbedWarning)]
    swallowed = [m for m in messages if "cancellation" in m]
    assert len(swallowed) == 1, messages
    assert "swallower" in swallowed[0]
    assert "on node 'c1'" in swallowed[0]
    assert re.search(r"test_errors_actionable\.py:\d+ in swallower", swallowed[0])


def test_no_false_alarm_for_the_standard_librarys_own_wait_for_swallow() -> None:
    """CPython 3.11's wait_for returns the result when cancelled just as the
    inner future finishes: the user's code swallowed nothing."""

    async def main() -> object:
        fut = asyncio.get_running_loop().create_future()

        async def worker() -> object:
            return await asyncio.wait_for(fut, 10)

        task = asyncio.create_task(worker())
        await asyncio.sleep(0)
        fut.set_result(1)
        task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            return "cancelled"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seedbed.run(main, seed=1)
    assert not [w for w in caught if "cancellation" in str(w.message)]


def test_loop_offers_base_event_loop_private_attributes() -> None:
    seen: dict[str, object] = {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(5, lambda: None)
        loop.call_soon(lambda: None)
        seen["ready"] = len(loop._ready)  # type: ignore[attr-defined]
        seen["ready_type"] = type(loop._ready)  # type: ignore[attr-defined]
        seen["scheduled"] = [h.when() for h in loop._scheduled]  # type: ignore[attr-defined]
        seen["thread"] = loop._thread_id  # type: ignore[attr-defined]
        seen["stopping"] = loop._stopping  # type: ignore[attr-defined]
        seen["executor"] = loop._default_executor  # type: ignore[attr-defined]
        seen["debug"] = loop._debug  # type: ignore[attr-defined]
        seen["slow"] = loop.slow_callback_duration  # type: ignore[attr-defined]
        seen["resolution"] = loop._clock_resolution  # type: ignore[attr-defined]

    seedbed.run(main, seed=1)
    assert seen["ready_type"] is collections.deque and seen["ready"] == 1
    assert seen["scheduled"] == [pytest.approx(5.0, abs=0.01)]
    assert seen["thread"] == threading.get_ident()
    assert seen["stopping"] is False and seen["executor"] is None and seen["debug"] is False
    assert seen["slow"] == 0.1
    assert isinstance(seen["resolution"], float) and 0 < seen["resolution"] <= 1e-3
    loop = seedbed.new_event_loop(seed=1)
    assert loop._thread_id is None  # type: ignore[attr-defined]
    loop.close()


def test_a_swallow_by_user_code_around_wait_for_is_still_reported() -> None:
    """Only the standard library's own swallow is excused: user code that
    catches the CancelledError wait_for re-raises is reported, on every version."""

    async def main() -> None:
        never = asyncio.get_running_loop().create_future()

        async def swallower() -> None:
            try:
                await asyncio.wait_for(never, 10)
            except asyncio.CancelledError:
                pass  # the bug

        task = asyncio.create_task(swallower())
        await asyncio.sleep(1)
        task.cancel()
        await task

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seedbed.run(main, seed=1)
    assert [w for w in caught if "caught its cancellation" in str(w.message)]
