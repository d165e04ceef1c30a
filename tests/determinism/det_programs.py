"""Programs for the determinism tier: each exercises one way a run could depend on
its process (memory addresses, garbage collection, task names, the seeded
randomness) while staying a plain asyncio program."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from seedbed.aio import _ordering


async def _echo(index: int) -> int:
    await asyncio.sleep(0)
    return index


async def as_completed_unordered() -> list[int]:
    """as_completed as the stdlib does it: coroutines ordered by address."""
    # The stdlib's own, from the provider that keeps it: a global of this
    # module holding it would be rebound to seedbed's ordered stand-in.
    stdlib = _ordering._real_as_completed
    return [await f for f in stdlib([_echo(i) for i in range(12)])]


async def as_completed_order() -> list[int]:
    """The order as_completed yields tasks that finish at one step."""
    return [await f for f in asyncio.as_completed([_echo(i) for i in range(12)])]


async def named_workers() -> list[str]:
    """Named tasks racing on seeded sleeps, drawing from the random module."""
    finished: list[str] = []

    async def worker(name: str) -> None:
        for _ in range(3):
            await asyncio.sleep(random.random() / 100)
        finished.append(name)

    async with asyncio.TaskGroup() as group:
        for index in range(6):
            group.create_task(worker(f"worker-{index}"), name=f"worker-{index}")
    done, _ = await asyncio.wait(
        [asyncio.create_task(_echo(i), name=f"echo-{i}") for i in range(5)]
    )
    finished.extend(task.get_name() for task in done)
    return finished


class _Cycle:
    """Garbage that only the cycle collector frees; its finalizer logs the step."""

    def __init__(self, log: list[str], label: str) -> None:
        self.me = self
        self.log = log
        self.label = label

    def __del__(self) -> None:
        loop = asyncio.get_running_loop()
        self.log.append(f"{self.label}@{loop.steps}")  # type: ignore[attr-defined]


async def gc_finalizers() -> list[str]:
    """Cyclic garbage made all through a run: when each finalizer runs must not vary."""
    log: list[str] = []
    for round_ in range(40):
        _Cycle(log, f"c{round_}")
        for _ in range(120):  # 4,800 steps: a collection inside the run
            [object() for _ in range(50)]  # allocations that would trigger automatic collection
            await asyncio.sleep(0)
    return log


async def mixed() -> dict[str, Any]:
    """All of the above in one run."""
    return {
        "as_completed": await as_completed_order(),
        "named": await named_workers(),
        "gc": await gc_finalizers(),
        "random": random.getrandbits(32),
    }
