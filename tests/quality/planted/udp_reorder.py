"""Reorder over UDP: a traffic counter collected from datagrams.

A switch reports its byte counter (monotonic, like an SNMP octet counter)
to a collector every few milliseconds over UDP. The collector adds up the
increments and treats a counter that went down as a restarted switch (the
increment is then the whole new value). The buggy collector takes the
datagrams in the order they arrive, so one overtaking another looks like a
restart and counts its bytes twice. The correct one drops a report whose
sequence number is not newer than the last it used, as datagrams may
arrive in any order.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.quality.planted._defaults import options, run_world

from seedbed import Simulation

PORT = 7300
REPORTS = 30


class Collector(asyncio.DatagramProtocol):
    def __init__(self, by_sequence: bool) -> None:
        self.by_sequence = by_sequence
        self.sequence = 0
        self.counter = 0
        self.total = 0
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        words = data.split()
        if words[0] == b"total?":
            self.transport.sendto(str(self.total).encode(), addr)
            return
        sequence, counter = int(words[1]), int(words[2])
        if self.by_sequence and sequence <= self.sequence:
            return  # an older report overtaken by a newer one
        self.sequence = sequence
        increment = counter - self.counter if counter >= self.counter else counter  # restart
        self.total += increment
        self.counter = counter


def collector(by_sequence: bool) -> Any:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(
            lambda: Collector(by_sequence), local_addr=("0.0.0.0", PORT)
        )
        await asyncio.Event().wait()

    return main


class Answers(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.answers: asyncio.Queue[bytes] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.answers.put_nowait(data)


async def switch() -> int:
    loop = asyncio.get_running_loop()
    transport, answers = await loop.create_datagram_endpoint(
        Answers, remote_addr=("collector", PORT)
    )
    counter = 0
    for sequence in range(1, REPORTS + 1):
        counter += 1500 * (sequence % 4 + 1)
        transport.sendto(f"report {sequence} {counter}".encode())
        await asyncio.sleep(0.001)
    await asyncio.sleep(1.0)  # longer than any hop: every report has arrived
    transport.sendto(b"total?")
    total = int(await asyncio.wait_for(answers.answers.get(), 5.0))
    assert total == counter, f"the collector counted {total} bytes, the switch sent {counter}"
    transport.close()
    return total


def run(seed: int, buggy: bool) -> str | None:
    world = options()
    sim = Simulation(seed=seed, **world)
    sim.host("collector", collector(by_sequence=not buggy))
    sim.client("switch", switch)
    return run_world(sim, max_time=30.0)
