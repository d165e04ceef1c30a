"""Upgrading the plain-file store: a new record format, rolled out under load.

Version 1 is `examples/plainlog.py`'s store with its fix (it fsyncs before
it acknowledges): records are `key value` lines. Version 2 writes JSON
records. Under `upgrades=`, the scenario upgrades the store's node to
version 2 in the middle of the workload (stopped or crashed, as drawn), on
the disk version 1 wrote, and in one seed in four rolls it back to
version 1 for a while, on the disk version 2 wrote.

- `upgrade_breaks`: version 2 reads only JSON. After the upgrade the records
  version 1 acknowledged are unreadable, and the store's own check (every
  acknowledged key is there after a restart) fails.
- `upgrade_compatible`: version 2 reads both formats, and keeps writing the
  old one (the new format is for a later release, once no version 1 is left
  to roll back to): old and new code read each other's disks.

    seedbed sweep examples.upgrade:upgrade_breaks --seeds 30
    seedbed sweep examples.upgrade:upgrade_compatible --seeds 100

A wire protocol change, rolled out the same way, is the second half below.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import seedbed
from examples import plainlog
from seedbed import FaultProfile, Scenario, Simulation

PLAIN = plainlog.Store


class JsonOnly(PLAIN):
    """Version 2 as first written: JSON records, and nothing else read back."""

    @staticmethod
    def encode(key: str, value: str) -> str:
        return json.dumps({"k": key, "v": value}) + "\n"

    @staticmethod
    def decode(line: str) -> tuple[str, str] | None:
        try:
            record = json.loads(line)
        except ValueError:
            return None  # (a torn line; and every line version 1 wrote)
        if isinstance(record, dict) and {"k", "v"} <= set(record):
            return str(record["k"]), str(record["v"])
        return None


class ReadsBoth(PLAIN):
    """Version 2 done right: reads JSON and `key value`, writes what version 1 reads."""

    @staticmethod
    def decode(line: str) -> tuple[str, str] | None:
        return JsonOnly.decode(line) or plainlog.decode(line)


def make(name: str, version_two: type[PLAIN]) -> Scenario:
    return Scenario(
        name,
        plainlog.setup_for(durable=True),  # type: ignore[arg-type]
        faults=FaultProfile(crash_per_second=0.1, downtime_mean=0.3),
        duration=8.0,
        invariants=[plainlog.nothing_acknowledged_was_lost],
        liveness=[plainlog.clients_finished],
        liveness_timeout=30.0,
        upgrades={"store": plainlog.server(True, version_two)},
    )


upgrade_breaks = make("upgrade_breaks", JsonOnly)
upgrade_compatible = make("upgrade_compatible", ReadsBoth)


# -- a wire protocol change ------------------------------------------------------
#
# Two peers gossip a counter over UDP every 50 ms. Version 1 sends `count N`;
# version 2 sends JSON. During a rolling upgrade one peer runs version 2 while
# the other still runs version 1: `wire_breaks`' version 2 neither sends what
# version 1 reads nor reads what it sends, and the peers' check (every
# message a peer receives, it understands) fails while the versions are mixed.
# `wire_compatible`'s version 2 reads both and sends what version 1 reads.

GOSSIP_PORT = 7200
PEERS = ("a", "b")


@dataclass
class Gossip:
    garbled: list[str] = field(default_factory=list)  # messages a peer could not read
    heard: dict[str, int] = field(default_factory=dict)


gossip = Gossip()


def wire_v1(line: str) -> int | None:
    word, _, number = line.partition(" ")
    return int(number) if word == "count" and number.isdigit() else None


def wire_v2(line: str) -> int | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("count") if isinstance(message, dict) else None


def peer(send: Callable[[int], str], read: Callable[[str], int | None]) -> Any:
    async def main() -> None:
        me = seedbed.current_node()
        other = next(name for name in PEERS if name != me)
        loop = asyncio.get_running_loop()
        count = 0

        class Inbox(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: Any) -> None:
                line = data.decode(errors="replace")
                value = read(line)
                if value is None:
                    gossip.garbled.append(f"{me} cannot read {line!r}")
                else:
                    gossip.heard[str(me)] = value

        await loop.create_datagram_endpoint(Inbox, local_addr=("0.0.0.0", GOSSIP_PORT))
        out, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol,
                                                     remote_addr=(other, GOSSIP_PORT))  # fmt: skip
        while True:
            count += 1
            out.sendto(send(count).encode())
            await asyncio.sleep(0.05)

    return main


def v1_peer() -> Any:
    return peer(lambda n: f"count {n}", wire_v1)


def v2_peer(compatible: bool) -> Any:
    if compatible:
        return peer(lambda n: f"count {n}", lambda line: wire_v2(line) or wire_v1(line))
    return peer(lambda n: json.dumps({"count": n}), wire_v2)


def gossip_setup(sim: Simulation) -> None:
    global gossip
    gossip = Gossip()
    for name in PEERS:
        sim.host(name, v1_peer())


def every_message_understood() -> bool:
    assert not gossip.garbled, gossip.garbled[0]
    return True


def both_heard() -> bool:
    return set(gossip.heard) == set(PEERS)


def wire(name: str, compatible: bool) -> Scenario:
    return Scenario(
        name, gossip_setup, duration=4.0,
        invariants=[every_message_understood], liveness=[both_heard], liveness_timeout=5.0,
        upgrades={peer_name: v2_peer(compatible) for peer_name in PEERS},
    )  # fmt: skip


wire_breaks = wire("wire_breaks", compatible=False)
wire_compatible = wire("wire_compatible", compatible=True)


# -- across two runs: version 2 started on the disks version 1 saved ----------------
#
#     seedbed run examples.plainlog:plainlog_fixed --seed 1 --save-disks DISKS
#     seedbed run examples.upgrade:readback_breaks --seed 1 --load-disks DISKS
#
# Version 2 starts on version 1's saved disks and a client reads back the first
# key version 1's workload wrote (and acknowledged, so on a synced image it is
# there): the JSON-only version cannot find it.


def readback_setup(version_two: type[PLAIN]) -> Callable[[Simulation], None]:
    def setup(sim: Simulation) -> None:
        sim.host("store", plainlog.server(True, version_two))
        for name in ("c0", "c1"):  # the saved world's clients, with nothing to do
            sim.client(name, reader if name == "c0" else idle)

    return setup


async def reader() -> str:
    value = await plainlog.ask("GET c0-0")
    assert value != "-", "version 2 cannot find what version 1 wrote (key c0-0)"
    return value


async def idle() -> None:
    return None


readback_breaks = Scenario("readback_breaks", readback_setup(JsonOnly), duration=2.0)
readback_compatible = Scenario("readback_compatible", readback_setup(ReadsBoth), duration=2.0)
