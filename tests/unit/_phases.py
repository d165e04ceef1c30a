"""A node that runs one phase per incarnation, crashed between phases: what the file
API tests drive (each phase is a plain async function of the node's code)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from seedbed import DiskConfig, Simulation

Phase = Callable[[], Awaitable[Any]]


def run_phases(*phases: Phase, seed: int = 0, disk: DiskConfig | None = None) -> list[Any]:
    """Each phase's value; node "n1" crashes (and restarts) after each but the last."""
    results: list[Any] = []
    queue = list(phases)

    async def main() -> None:
        phase = queue.pop(0)
        results.append(await phase())
        await asyncio.Event().wait()  # up until the crash

    sim = Simulation(seed=seed, disk=disk)
    sim.host("n1", main)
    for index in range(len(phases)):
        sim.advance(1.0)
        if index < len(phases) - 1:
            sim.crash("n1")
            sim.restart("n1")
    sim.run(max_time=len(phases) + 1.0)
    assert len(results) == len(phases), "every phase ran to its end"
    return results
