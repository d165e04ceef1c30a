"""Planted bugs that hide in orders one seed's default scheduling never takes.

Each is found only by one of the exploration options (README, "Exploring
more orders"); tests/unit/test_explore.py asserts that, and
`bench/bugs.py` counts the runs each strategy needs to find them:

    seedbed.run(lost_update, seed=0, explore_tasks=True)  # AssertionError: lost update
"""

from __future__ import annotations

import asyncio

import seedbed
from seedbed import Simulation


async def lost_update() -> int:
    """Three tasks staggered by `sleep(0)`, each reading, yielding, writing.

    In FIFO order each write lands before the next task reads; if a later
    task resumes before an earlier one in the same iteration, an update is lost.
    """
    counter = 0

    async def worker(stagger: int) -> None:
        nonlocal counter
        for _ in range(stagger):
            await asyncio.sleep(0)
        value = counter
        await asyncio.sleep(0)
        counter = value + 1

    await asyncio.gather(*(worker(i) for i in range(3)))
    assert counter == 3, f"lost update: counter is {counter}"
    return counter


async def timer_tie() -> str:
    """Two timeouts of one length, armed one after the other: code assuming the
    first armed fires first breaks when they tie."""
    events: list[str] = []

    async def arm(name: str) -> None:
        await asyncio.sleep(0.010)
        events.append(name)

    first = asyncio.create_task(arm("first"))
    await asyncio.sleep(0)  # the second is armed a callback (a few microseconds) later
    second = asyncio.create_task(arm("second"))
    await asyncio.gather(first, second)
    assert events[0] == "first", "the later timer fired first"
    return events[0]


def depth_two_world(sim: Simulation) -> None:
    """A bug of depth two: b runs all its twenty steps while a is midway.

    a counts to twenty, b looks twenty times, all at one virtual instant; b
    failing needs a to stop somewhere in its middle (one constraint) and b to
    run to its end before a resumes (the second). Coin flips per step make
    twenty b-steps in a row a one-in-a-million order.
    """
    shared = {"a": 0}

    async def a() -> None:
        for i in range(1, 21):
            await asyncio.sleep(0)
            shared["a"] = i

    async def b() -> None:
        seen = []
        for _ in range(20):
            await asyncio.sleep(0)
            seen.append(shared["a"])
        stuck = len(set(seen)) == 1 and 5 <= seen[0] <= 15
        seedbed.always(not stuck, "b never sees a stuck midway", seen=seen[0])

    sim.client("a", a)
    sim.client("b", b)


def depth_two(seed: int) -> object:
    """`depth_two_world` under PCT, as a CLI target: seed 1 fails.

    seedbed run examples.orders:depth_two --seed 1
    """
    sim = Simulation(seed=seed, strategy="pct", pct_depth=2, pct_steps=60)
    depth_two_world(sim)
    return sim.run(max_time=10)
