"""Small scenarios the sweep tests run (module level, so they import by name)."""

from __future__ import annotations

import asyncio
import random

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

PORT = 9100


def ping_world(sim: Simulation) -> None:
    """A server answering pings, one client pinging it through crashes."""

    async def server() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(await reader.readline())
            await writer.drain()
            writer.close()

        listener = await asyncio.start_server(handle, "0.0.0.0", PORT)
        await listener.serve_forever()

    async def client() -> int:
        answered = 0
        for i in range(8):
            try:
                reader, writer = await asyncio.open_connection("server", PORT)
                writer.write(f"{i}\n".encode())
                if await asyncio.wait_for(reader.readline(), timeout=0.5):
                    answered += 1
                    seedbed.reachable("a ping was answered")
                writer.close()
            except (OSError, TimeoutError):
                seedbed.sometimes(True, "a ping failed")
            seedbed.sometimes(i > 100, "a client sent more than a hundred pings")
            await asyncio.sleep(0.25)
        return answered

    sim.host("server", server)
    sim.client("pinger", client)


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
