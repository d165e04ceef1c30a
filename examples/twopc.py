"""A two-phase commit over UDP with a planted bug: COMMIT is sent once.

A coordinator prepares each transaction with three participants (PREPARE is
retried until every participant has voted yes), then sends COMMIT to each,
once. A datagram the network loses leaves that participant prepared while
the coordinator counts the transaction committed. Under swarm's datagram
loss the failure report names the lost datagram and its link:

    seedbed run examples.twopc:twopc --seed 0
"""

from __future__ import annotations

import asyncio
from typing import Any

from seedbed import Scenario, Simulation

PARTICIPANTS = ("p1", "p2", "p3")
PORT = 9000
ledger: dict[str, dict[str, str]] = {}


class Participant(asyncio.DatagramProtocol):
    """Votes yes to every PREPARE; records a COMMIT."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        kind, tx = data.decode().split()
        if kind == "PREPARE":
            ledger[self.name].setdefault(tx, "prepared")
            self.transport.sendto(f"YES {tx} {self.name}".encode(), addr)
        elif kind == "COMMIT":
            ledger[self.name][tx] = "committed"


def participant(name: str) -> Any:
    async def main() -> None:
        ledger.setdefault(name, {})
        loop = asyncio.get_running_loop()
        here = ("0.0.0.0", PORT)
        await loop.create_datagram_endpoint(lambda: Participant(name), local_addr=here)
        await asyncio.Event().wait()

    return main


class Votes(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.votes: dict[str, set[str]] = {}

    def datagram_received(self, data: bytes, addr: Any) -> None:
        _, tx, who = data.decode().split()
        self.votes.setdefault(tx, set()).add(who)


async def coordinator() -> int:
    loop = asyncio.get_running_loop()
    transport, votes = await loop.create_datagram_endpoint(Votes, local_addr=("0.0.0.0", 9100))
    committed = []
    for i in range(10):
        tx = f"tx{i}"
        for _ in range(20):  # prepare, retried until every participant voted
            for name in PARTICIPANTS:
                if name not in votes.votes.get(tx, set()):
                    transport.sendto(f"PREPARE {tx}".encode(), (name, PORT))
            await asyncio.sleep(0.05)
            if votes.votes.get(tx, set()) == set(PARTICIPANTS):
                break
        else:
            continue  # aborted: never prepared everywhere
        for name in PARTICIPANTS:  # the bug: COMMIT sent once, never retried
            transport.sendto(f"COMMIT {tx}".encode(), (name, PORT))
        committed.append(tx)
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)
    for tx in committed:
        for name in PARTICIPANTS:
            state = ledger[name].get(tx)
            assert state == "committed", f"{tx} committed by the coordinator but {state} on {name}"
    return len(committed)


def setup(sim: Simulation) -> None:
    ledger.clear()
    for name in PARTICIPANTS:
        sim.host(name, participant(name))
    sim.client("coord", coordinator)


twopc = Scenario("twopc", setup, faults="swarm", duration=20.0)
