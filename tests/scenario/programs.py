"""Programs the scenario tests run, in this process and in fresh ones.

They live in a module of their own so `seedbed run tests/scenario/programs.py:NAME`
can import them in a new interpreter.
"""

from __future__ import annotations

import asyncio
import os
import random


async def fifty_tasks() -> tuple[float, int]:
    """50 tasks: varied sleeps, queue ping-pong, random.random(), and set order.

    The order in which tasks start comes from iterating a set of strings, so it
    depends on the string-hash seed: the same trace hash in two processes
    proves that seedbed fixed it, not luck.
    """
    names = {f"worker-{i}" for i in range(50)}
    pings: asyncio.Queue[tuple[str, asyncio.Queue[str]]] = asyncio.Queue()
    total = 0.0

    async def worker(name: str) -> None:
        nonlocal total
        reply: asyncio.Queue[str] = asyncio.Queue()
        number = int(name.split("-")[1])
        for _ in range(5):
            await asyncio.sleep(random.random() * 0.1 + number * 0.001)
            await pings.put((name, reply))
            total += len(await reply.get())

    async def ponger() -> int:
        served = 0
        while served < 250:
            name, reply = await pings.get()
            await asyncio.sleep(random.uniform(0.0, 0.01))
            await reply.put(name.upper())
            served += 1
        return served

    pong = asyncio.create_task(ponger())
    async with asyncio.TaskGroup() as group:
        for name in names:
            group.create_task(worker(name), name=name)
    return total, await pong


async def depends_on_the_process() -> float:
    """Planted nondeterminism: the process id leaks into timing."""
    await asyncio.sleep(1 + os.getpid() / 1e6)  # distinct for every process
    return asyncio.get_running_loop().time()
