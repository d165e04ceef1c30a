"""A client that retries each request over UDP until answered, under long
partitions: what `leads_to` and `eventually` judge while the faults go on."""

from __future__ import annotations

import asyncio
from typing import Any

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

PORT = 7000
state: dict[str, Any] = {}


def world(sim: Simulation, *, cut_at: float | None = 5.0, cut_for: float = 4.0) -> None:
    """A server acking request ids; a client sending one every 0.1 s, resending
    the unanswered ones each 0.1 s; with `cut_at`, cut apart for `cut_for` seconds."""
    state.clear()
    state.update(sent=set(), answered=set())

    async def server() -> None:
        loop = asyncio.get_running_loop()

        class Ack(asyncio.DatagramProtocol):
            def connection_made(self, transport: Any) -> None:
                self.transport = transport

            def datagram_received(self, data: bytes, addr: Any) -> None:
                self.transport.sendto(b"ack " + data, addr)

        await loop.create_datagram_endpoint(Ack, local_addr=("0.0.0.0", PORT))
        await asyncio.Event().wait()

    async def client() -> int:
        loop = asyncio.get_running_loop()

        class Acks(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: Any) -> None:
                state["answered"].add(int(data.split()[1]))

        transport, _ = await loop.create_datagram_endpoint(Acks, remote_addr=("server", PORT))
        for number in range(150):
            state["sent"].add(number)
            for waiting in sorted(state["sent"] - state["answered"]):
                transport.sendto(str(waiting).encode())
            await asyncio.sleep(0.1)
        while state["sent"] - state["answered"]:
            for waiting in sorted(state["sent"] - state["answered"]):
                transport.sendto(str(waiting).encode())
            await asyncio.sleep(0.1)
        return len(state["answered"])

    async def cutter() -> None:
        assert cut_at is not None
        await asyncio.sleep(cut_at)
        sim.partition("c", "server")
        await asyncio.sleep(cut_for)
        sim.repair("c", "server")

    sim.host("server", server)
    sim.client("c", client)
    if cut_at is not None:
        sim.client("cutter", cutter)


def sent() -> set[int]:
    return set(state["sent"])


def answered() -> set[int]:
    return set(state["answered"])


def all_answered() -> bool:
    return not (state["sent"] - state["answered"])


def cut(seconds: float, *properties: Any) -> Scenario:
    return Scenario(f"cut {seconds:g}s", lambda sim: world(sim, cut_for=seconds),
                    duration=40.0, invariants=list(properties))  # fmt: skip


responded_in_1 = cut(4.0, seedbed.leads_to(sent, answered, within=1))
responded_in_100 = cut(4.0, seedbed.leads_to(sent, answered, within=100))
drained_in_5 = cut(4.0, seedbed.eventually(all_answered, within=5))
drained_in_3 = cut(4.0, seedbed.eventually(all_answered, within=3))
calm_in_1 = Scenario("calm", lambda sim: world(sim, cut_at=None), duration=40.0,
                     invariants=[seedbed.leads_to(sent, answered, within=1)])  # fmt: skip


def _nemesis_world(sim: Simulation) -> None:
    world(sim, cut_at=None)

    async def spare() -> None:
        await asyncio.Event().wait()

    sim.host("spare", spare)  # a third node: isolating one is a minority


LONG_CUTS = FaultProfile(partition_per_second=0.2, fault_duration_mean=4.0)
swept_in_1 = Scenario("swept 1", _nemesis_world, faults=LONG_CUTS, duration=30.0,
                      invariants=[seedbed.leads_to(sent, answered, within=1)])  # fmt: skip
swept_in_100 = Scenario("swept 100", _nemesis_world, faults=LONG_CUTS, duration=30.0,
                        invariants=[seedbed.leads_to(sent, answered, within=100)])  # fmt: skip
