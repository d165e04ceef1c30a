"""The tiny system `bench/sweep.py --tiny` runs: two tasks passing ten items through a queue.

The same coroutine runs two ways, so their difference is what a `Scenario`
adds per seed (its world, node, entropy streams, catalog, replay command):
as a `Scenario`'s one client with no faults, and on a bare
`seedbed.new_event_loop(seed)`. Issue 30 quotes detangle at 0.42 ms of CPU
per seed for a system this small.
"""

from __future__ import annotations

import asyncio
import random

import seedbed
from seedbed import Scenario, Simulation

ITEMS = 10


async def work() -> int:
    """A producer and a consumer with seeded think times: 10 items, 20 timers."""
    queue: asyncio.Queue[int] = asyncio.Queue()

    async def produce() -> None:
        for item in range(ITEMS):
            await asyncio.sleep(random.uniform(0.001, 0.002))
            queue.put_nowait(item)

    async def consume() -> int:
        total = 0
        for _ in range(ITEMS):
            total += await queue.get()
            await asyncio.sleep(random.uniform(0.0005, 0.001))
        return total

    _, total = await asyncio.gather(produce(), consume())
    return total


def world(sim: Simulation) -> None:
    sim.client("client", work)


scenario = Scenario("tiny", world, duration=1.0)


def bare(seed: int) -> int:
    """The same work on a bare seedbed loop."""
    loop = seedbed.new_event_loop(seed)
    try:
        return loop.run_until_complete(work())
    finally:
        loop.close()
