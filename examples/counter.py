"""An exactly-once counter service over TCP, with a planted bug.

A server keeps a count on its disk. Clients send `INC <id>` over a stream
and retry with the same id until they get an answer, so a server must apply
each id once: it remembers the ids it has applied. The planted bug: the
server fsyncs the count, but keeps the applied ids only in memory. When it
crashes after applying an increment and before its answer reaches the
client, the client retries, and the restarted server (which forgot the id)
counts it twice. `counter_fixed` persists the count and the ids together,
atomically (write a temporary file, fsync, rename, fsync the directory).

Under crashes and partitions a sweep finds the bug in a few dozen seeds:

    seedbed sweep examples.counter:counter --seeds 200
    seedbed run examples.counter:counter --seed <a failing seed>
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import seedbed
from seedbed import FaultProfile, NetworkConfig, Scenario, Simulation, fs

PORT = 7000
CLIENTS = 3
INCREMENTS = 20  # per client


@dataclass
class World:
    """What the oracles look at: the server's count and what clients asked for."""

    count: int = 0  # the running server's count (kept while it is down)
    issued: set[str] = field(default_factory=set)  # ids clients sent
    acknowledged: int = 0  # increments clients got an answer for
    finished: int = 0  # clients that have finished their increments


world = World()


def server(durable_ids: bool) -> object:
    async def main() -> None:
        count, applied = await _load(durable_ids)
        world.count = count

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal count
            request = await reader.readline()
            request_id = request.decode().split()[1]
            if request_id not in applied:
                applied.add(request_id)
                count += 1
                await _save(count, applied, durable_ids)
                world.count = count
            writer.write(f"{count}\n".encode())
            await writer.drain()
            writer.close()

        listener = await asyncio.start_server(handle, "0.0.0.0", PORT)
        await listener.serve_forever()

    return main


async def _load(durable_ids: bool) -> tuple[int, set[str]]:
    if not await fs.exists("/state"):
        return 0, set()
    state = json.loads(await fs.read_file("/state"))
    return state["count"], set(state["applied"]) if durable_ids else set()


async def _save(count: int, applied: set[str], durable_ids: bool) -> None:
    if not durable_ids:  # the bug: the ids applied are not saved with the count
        await fs.write_file("/state", json.dumps({"count": count, "applied": []}).encode(),
                            durable=True)  # fmt: skip
        return
    state = {"count": count, "applied": sorted(applied)}
    await fs.write_file("/state.tmp", json.dumps(state).encode(), durable=True)
    await fs.rename("/state.tmp", "/state")
    await fs.fsync_dir("/")


async def client() -> int:
    me = seedbed.current_node()
    for i in range(INCREMENTS):
        request_id = f"{me}-{i}"
        world.issued.add(request_id)
        attempts = 0
        while True:
            attempts += 1
            try:
                reader, writer = await asyncio.open_connection("server", PORT)
                writer.write(f"INC {request_id}\n".encode())
                answer = await asyncio.wait_for(reader.readline(), timeout=1.0)
                writer.close()
                if answer:
                    break
            except (TimeoutError, OSError):
                pass
            await asyncio.sleep(0.2)
        seedbed.sometimes(attempts > 1, "a client retried an increment")
        world.acknowledged += 1
        await asyncio.sleep(0.3)
    world.finished += 1
    return INCREMENTS


def build(durable_ids: bool) -> object:
    def setup(sim: Simulation) -> None:
        global world
        world = World()  # each run starts from nothing
        sim.host("server", server(durable_ids))  # type: ignore[arg-type]
        for n in range(CLIENTS):
            sim.client(f"c{n}", client)

    return setup


def counted_at_most_once() -> bool:
    assert world.count <= len(world.issued), (
        f"the server counted {world.count} increments, but clients only sent {len(world.issued)}"
    )
    return True


def every_client_finished() -> bool:
    return world.finished == CLIENTS


FAULTS = FaultProfile(crash_per_second=0.5, partition_per_second=0.2, downtime_mean=0.5)
NETWORK = NetworkConfig(latency_min=0.001, latency_mean=0.01, latency_max=0.05)  # a WAN

counter = Scenario(
    "counter", build(durable_ids=False), faults=FAULTS, duration=30.0,
    invariants=[counted_at_most_once], liveness=[every_client_finished], liveness_timeout=30.0,
    network=NETWORK,
)  # fmt: skip

counter_fixed = Scenario(
    "counter_fixed", build(durable_ids=True), faults=FAULTS, duration=30.0,
    invariants=[counted_at_most_once], liveness=[every_client_finished], liveness_timeout=30.0,
    network=NETWORK,
)  # fmt: skip
