"""A heartbeat failure detector with a fixed timeout: two primaries.

p1 is the primary and sends p2 a heartbeat every `INTERVAL` over one TCP
connection; p2, the backup, takes over when it has heard nothing for
`TIMEOUT`. In the buggy pair the primary never doubts itself: one
heartbeat held up by the latency tail (and every one behind it on the
stream) and both nodes act as primary. In the correct pair p1 is primary
only while it holds a lease: p2 acknowledges each heartbeat, which promises
not to take over for `TIMEOUT` from when p2 received it, and p1 counts its
lease `LEASE` (no longer than `TIMEOUT`) from when it sent that heartbeat,
which was earlier. p2 grants nothing once it has taken over.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.quality.planted._defaults import options, run_scenario
from tests.quality.planted._net import until_hang_up

from seedbed import Scenario, Simulation

PORT = 7100
INTERVAL = 0.01
TIMEOUT = 0.04  # four missed heartbeats
LEASE = TIMEOUT


class Primary:
    """p1: sends heartbeats; primary forever (buggy) or while its lease lasts."""

    def __init__(self, leased: bool, clock: Any) -> None:
        self.leased = leased
        self.clock = clock  # the world's monotonic clock: the invariant asks from outside p1
        self.lease_until = 0.0
        self.sent: dict[int, float] = {}

    def is_primary(self) -> bool:
        if not self.leased:
            return True
        return bool(self.clock() < self.lease_until)

    async def main(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                reader, writer = await asyncio.open_connection("p2", PORT)
                break
            except ConnectionError:
                await asyncio.sleep(INTERVAL)
        acks = asyncio.create_task(self._read_acks(reader))
        number = 0
        while not acks.done():
            number += 1
            self.sent[number] = loop.time()
            writer.write(f"beat {number}\n".encode())
            await asyncio.sleep(INTERVAL)

    async def _read_acks(self, reader: asyncio.StreamReader) -> None:
        while line := await reader.readline():
            word, number = line.split()
            if word == b"ack":  # the lease runs from when that heartbeat left
                self.lease_until = max(self.lease_until, self.sent.pop(int(number)) + LEASE)


class Backup:
    """p2: acknowledges heartbeats; takes over after TIMEOUT without one."""

    def __init__(self) -> None:
        self.primary = False
        self.heard = 0.0

    def is_primary(self) -> bool:
        return self.primary

    async def main(self) -> None:
        loop = asyncio.get_running_loop()
        self.heard = loop.time()
        server = await asyncio.start_server(until_hang_up(self._serve), "0.0.0.0", PORT)
        while not self.primary:
            await asyncio.sleep(INTERVAL / 2)
            if loop.time() - self.heard >= TIMEOUT:
                self.primary = True  # the primary is gone: take over
        server.close()
        await asyncio.Event().wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        while (line := await reader.readline()) and not self.primary:
            self.heard = loop.time()  # no takeover before heard + TIMEOUT: the lease we grant
            writer.write(b"ack " + line.split()[1] + b"\n")


def scenario(buggy: bool) -> Scenario:
    nodes: dict[str, Any] = {}

    def setup(sim: Simulation) -> None:
        def start(name: str, make: Any) -> Any:  # built inside main, seen by the oracle
            nodes[name] = make()
            return nodes[name].main()

        nodes["p1"], nodes["p2"] = Primary(not buggy, sim.loop.time), Backup()  # before starts
        sim.host("p1", lambda: start("p1", lambda: Primary(not buggy, sim.loop.time)))
        sim.host("p2", lambda: start("p2", Backup))

    def one_primary() -> bool:
        return not (nodes["p1"].is_primary() and nodes["p2"].is_primary())

    name = "heartbeat_" + ("buggy" if buggy else "correct")
    return Scenario(name, setup, duration=2.0, invariants=[one_primary], **options())


def run(seed: int, buggy: bool) -> str | None:
    return run_scenario(scenario(buggy), seed)
