"""Small scenarios the sweep tests run (module level, so they import by name)."""

from __future__ import annotations

import asyncio
import random

from tests._echo import echo_client, echo_server

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

PORT = 9100


def ping_world(sim: Simulation) -> None:
    """A server answering pings, one client pinging it through crashes."""

    def note(index: int, answered: int | None) -> None:
        if answered:
            seedbed.reachable("a ping was answered")
        elif answered is None:
            seedbed.sometimes(True, "a ping failed")
        seedbed.sometimes(index > 100, "a client sent more than a hundred pings")

    sim.host("server", echo_server(PORT))
    sim.client("pinger", echo_client(PORT, rounds=8, timeout=0.5, pause=0.25, note=note))


pinging = Scenario(
    "pinging",
    ping_world,
    faults=FaultProfile(crash_per_second=1.0, partition_per_second=1.0, downtime_mean=0.3),
    duration=5.0,
)


state = {"value": 0}


def climbing_world(sim: Simulation) -> None:
    """A value that climbs by random steps: past 3 it breaks the invariant."""
    state["value"] = 0

    async def climber() -> None:
        for _ in range(10):
            await asyncio.sleep(random.uniform(0.1, 0.5))
            state["value"] += random.randint(1, 4)

    sim.client("climber", climber)


def value_stays_small() -> bool:
    assert state["value"] < 3, f"value reached {state['value']}"
    return True


climbing = Scenario("climbing", climbing_world, invariants=[value_stays_small], duration=10.0)
