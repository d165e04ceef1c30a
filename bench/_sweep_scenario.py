"""The fixed small scenario `bench/sweep.py` sweeps: a server, two clients, crashes.

Module level, so a sweep worker imports it by file name
(`bench/_sweep_scenario.py:scenario`). A few ms of simulation per seed.
"""

from __future__ import annotations

import asyncio

from seedbed import FaultProfile, Scenario, Simulation

PORT = 7100


def world(sim: Simulation) -> None:
    async def server() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)
                await writer.drain()
            writer.close()

        listener = await asyncio.start_server(handle, "0.0.0.0", PORT)
        await listener.serve_forever()

    async def client() -> int:
        answered = 0
        for _ in range(3):
            try:
                reader, writer = await asyncio.open_connection("server", PORT)
                for i in range(5):
                    writer.write(f"{i}\n".encode())
                    if await asyncio.wait_for(reader.readline(), timeout=0.5):
                        answered += 1
                writer.close()
            except (OSError, TimeoutError):
                pass
            await asyncio.sleep(0.2)
        return answered

    sim.host("server", server)
    sim.host("standby", server)
    sim.host("witness", server)
    sim.client("a", client)
    sim.client("b", client)


scenario = Scenario(
    "bench_sweep", world, faults=FaultProfile(crash_per_second=0.5, downtime_mean=0.3),
    duration=5.0,
)  # fmt: skip
