"""Targets for the self-check tests: one whose result depends on the seeds run
before it in the process (a module-level list, as a library's cache would
be), and one that does not."""

from __future__ import annotations

import asyncio

RUNS: list[int] = []


async def leaky() -> int:
    RUNS.append(1)  # state that survives from one seed to the next
    await asyncio.sleep(0.01)
    return len(RUNS)


async def clean() -> int:
    await asyncio.sleep(0.01)
    return 1


async def dies_second_time() -> int:
    """Kills its process the second time it runs in it."""
    import os

    RUNS.append(1)
    if len(RUNS) > 1:
        os._exit(3)
    await asyncio.sleep(0.01)
    return 1
