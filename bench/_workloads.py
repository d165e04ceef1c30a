"""The loop workloads issue 50 measures, shared by `peers.py` and the instruction counts.

Each is a function of an event loop that returns (awaitable, events): run the
awaitable to completion on that loop and `events` units of work were done
(callbacks or task steps). Plain asyncio only, so every loop that implements
`AbstractEventLoop` runs the same code, and no randomness: the work is the
same on every loop and every run.

- ``mixed``: 300 tasks x 100 awaits each, cycling through `sleep(0)`, a sleep
  under 1 ms (they tie on a 1 ms clock), a shared `asyncio.Lock`, a shared
  `asyncio.Queue` (put then get) and an `asyncio.Semaphore` of its own that its
  neighbour releases;
- ``chain-1``: one `call_soon` chain;
- ``chains-1000``: 1,000 `call_soon` chains side by side;
- ``sleep0``: a `sleep(0)` storm, 1,000 tasks each yielding 30 times.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

Workload = Callable[[asyncio.AbstractEventLoop, float], tuple[Any, int]]


def chains(loop: asyncio.AbstractEventLoop, callbacks: int, count: int) -> asyncio.Future[None]:
    """`count` call_soon chains of `callbacks` callbacks in all; done at the last one."""
    done: asyncio.Future[None] = loop.create_future()
    running = [count]

    def step(left: int) -> None:
        if left:
            loop.call_soon(step, left - 1)
            return
        running[0] -= 1
        if not running[0]:
            done.set_result(None)

    for _ in range(count):
        loop.call_soon(step, callbacks // count - 1)
    return done


async def _mixed(tasks: int, awaits: int) -> None:
    lock = asyncio.Lock()
    queue: asyncio.Queue[int] = asyncio.Queue()
    turns = [asyncio.Semaphore(0) for _ in range(tasks)]

    async def worker(me: int) -> None:
        mine, neighbour = turns[me], turns[(me + 1) % tasks]
        for i in range(awaits):
            kind = i % 5
            if kind == 0:
                await asyncio.sleep(0)
            elif kind == 1:
                await asyncio.sleep(((me * 7 + i) % 9 + 1) / 10_000)  # 0.1-0.9 ms
            elif kind == 2:
                async with lock:
                    await asyncio.sleep(0)
            elif kind == 3:
                await queue.put(i)
                await queue.get()
            else:
                neighbour.release()
                await mine.acquire()

    await asyncio.gather(*(worker(me) for me in range(tasks)))


async def _storm(tasks: int, sleeps: int) -> None:
    async def yielder() -> None:
        for _ in range(sleeps):
            await asyncio.sleep(0)

    await asyncio.gather(*(yielder() for _ in range(tasks)))


def mixed(loop: asyncio.AbstractEventLoop, scale: float) -> tuple[Any, int]:
    awaits = max(5, int(100 * scale) // 5 * 5)
    return _mixed(300, awaits), 300 * awaits


def chain_one(loop: asyncio.AbstractEventLoop, scale: float) -> tuple[Any, int]:
    n = int(200_000 * scale)
    return chains(loop, n, 1), n


def chains_many(loop: asyncio.AbstractEventLoop, scale: float) -> tuple[Any, int]:
    n = int(200_000 * scale) // 1000 * 1000
    return chains(loop, n, 1000), n


def sleep0(loop: asyncio.AbstractEventLoop, scale: float) -> tuple[Any, int]:
    sleeps = max(1, int(30 * scale))
    return _storm(1000, sleeps), 1000 * sleeps


WORKLOADS: dict[str, tuple[str, Workload]] = {
    "mixed": ("mixed tasks", mixed),
    "chain-1": ("one call_soon chain", chain_one),
    "chains-1000": ("1,000 chains", chains_many),
    "sleep0": ("sleep(0) storm", sleep0),
}
