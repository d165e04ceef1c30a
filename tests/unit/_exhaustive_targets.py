"""Programs for `explore --exhaustive` (the sleep(0) race and its locked fix are
`examples.order_numbers`): a batch whose schedules can be counted, and a
program that draws more than schedules (module level, for replay commands)."""

from __future__ import annotations

import asyncio
import random

seen: list[tuple[int, ...]] = []  # each run of `three_in_a_batch`: the order they ran in


async def three_in_a_batch() -> None:
    """Three tasks, each resumed by its own sleep(0) in one batch: one order of 3."""
    order: list[int] = []

    async def step(index: int) -> None:
        await asyncio.sleep(0)
        order.append(index)

    await asyncio.gather(*(step(index) for index in range(3)))
    seen.append(tuple(order))


async def dice() -> float:
    await asyncio.sleep(0)
    return random.random()


_runs = [0]


async def leaky() -> None:
    """Two tasks or three, by how many runs this process made: state outside the run."""
    _runs[0] += 1

    async def step() -> None:
        await asyncio.sleep(0)

    await asyncio.gather(*(step() for _ in range(3 if _runs[0] % 2 else 2)))
