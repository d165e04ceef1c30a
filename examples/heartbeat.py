"""A planted bug of another kind than `examples.rare`'s: a rare state the network makes.

A leader (`n1`) sends a heartbeat datagram to its follower (`n2`) every tick
over a lossy network (each datagram lost with odds 0.4, a draw of the
network's stream, and delayed by its latency model). The follower counts the
ticks without one; after 7 in a row it suspects the leader and stands as a
candidate until a heartbeat arrives again. The planted bug: a leader that
restarts while its follower is a candidate takes the lead back without
asking, and two nodes lead. The state is made by the network, not by the
nodes' own draws, and it is fragile: a crash of the follower (the nemesis
picks either host) forgets the suspicion, so more crashes are not simply
better. Roughly 1 seed in 200 fails (`bench/explore_search.py` measures it).

    seedbed sweep examples.heartbeat:heartbeat --seeds 500
    seedbed explore examples.heartbeat:heartbeat --runs 500 --stop-on-failure
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

TICK = 0.05  # seconds between heartbeats, and between the follower's checks
SUSPECT_AFTER = 7  # ticks without a heartbeat
PORT = 5000


@dataclass
class Follower:
    """What the follower knows; a crash of `n2` forgets it (a fresh one restarts)."""

    missed: int = 0  # ticks in a row without a heartbeat
    heard: bool = False  # a heartbeat arrived since the last check
    candidate: bool = False


class _Heartbeats(asyncio.DatagramProtocol):
    def __init__(self, follower: Follower) -> None:
        self.follower = follower

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.follower.heard = True


def _setup(sim: Simulation) -> None:
    state = {"follower": Follower(), "leader started": False}

    async def leader() -> None:
        if state["leader started"]:  # a restart: it takes the lead back
            follower = state["follower"]
            assert isinstance(follower, Follower)
            seedbed.always(not follower.candidate, "one leader at a time", missed=follower.missed)
        state["leader started"] = True
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("n2", PORT)
        )
        while True:
            transport.sendto(b"beat")
            await asyncio.sleep(TICK)

    async def follower() -> None:
        me = Follower()  # a restarted follower remembers nothing
        state["follower"] = me
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: _Heartbeats(me), local_addr=("0.0.0.0", PORT))
        while True:
            await asyncio.sleep(TICK)
            me.missed = 0 if me.heard else me.missed + 1
            me.heard = False
            me.candidate = me.missed >= SUSPECT_AFTER if not me.candidate else me.missed > 0
            seedbed.coverage("heartbeats missed", min(me.missed, SUSPECT_AFTER + 2))

    sim.host("n1", leader)
    sim.host("n2", follower)


FAULTS = FaultProfile(crash_per_second=0.3, downtime_mean=0.05, max_down=1,
                      datagram_loss_probability=0.4)  # fmt: skip
heartbeat = Scenario("heartbeat", _setup, faults=FAULTS, duration=10.0)
