"""Quality: planted bugs must be found within a bounded number of seeds."""

from __future__ import annotations

import asyncio

from examples import race

import seedbed
from seedbed.sweep import sweep


def test_the_demo_race_is_found_within_fifty_seeds() -> None:
    result = sweep(race.main, range(50))
    assert result.failed_seeds, "the check-then-act race went unnoticed"
    assert all("balance went negative" in failure.error for failure in result.failures)


def test_a_lost_update_between_two_tasks_is_found_by_timer_tie_ordering() -> None:
    async def main() -> int:
        counter = {"value": 0}

        async def increment() -> None:
            await asyncio.sleep(1.0)  # both wake at the same instant: the tie is explored
            seen = counter["value"]
            await asyncio.sleep(0)
            counter["value"] = seen + 1

        async def reader() -> None:
            await asyncio.sleep(1.0)
            assert counter["value"] in (0, 2), f"observed a half-done update: {counter}"

        await asyncio.gather(increment(), increment(), reader())
        assert counter["value"] == 2, f"lost update: {counter['value']}"
        return counter["value"]

    result = sweep(main, range(100), cpu_cost_min=0.0, cpu_cost_max=0.0)
    assert len(result.failures) >= 10


def test_a_check_then_act_race_at_a_checkpoint_is_found_within_a_few_seeds() -> None:
    async def main() -> None:
        seats = {"free": 1}
        booked: list[str] = []

        async def book(who: str) -> None:
            await seedbed.checkpoint(f"{who} arrives")
            if seats["free"] > 0:
                await seedbed.checkpoint(f"{who} between check and act")
                seats["free"] -= 1
                booked.append(who)

        await asyncio.gather(book("ann"), book("bob"))
        assert len(booked) <= 1, f"double booking: {booked}"

    result = sweep(main, range(20))
    assert 1 <= len(result.failures) < 20
