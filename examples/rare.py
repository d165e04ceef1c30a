"""Four planted bugs that need a rare state first and then a fault.

Each is one node whose state moves a little every tick, by whether a
failpoint fires (a labelled draw of the run, with the scenario's failpoint
odds), and a nemesis that crashes the node now and then. A crash is
harmless except in one rare state, reached only by a run of lucky ticks: a
sweep must draw both in one seed, while `seedbed explore` keeps the runs
that got part of the way (each declares its progress with
`seedbed.coverage`) and branches from them. Roughly 1 seed in 200 to 1 in
800 fails (`bench/explore_search.py` measures it).

- `lag`: a follower's lag is a random walk (up with odds 0.42) that drifts
  back to 0; a crash of the leader while it is 17 or more loses entries.
- `handshake`: a nine-phase handshake advances a phase with odds 0.35,
  stays with odds 0.23 and falls back to the start otherwise; a crash in
  its last phase leaves a half-open session.
- `snapshot`: the log grows by one entry with odds 0.3 a tick; from 30
  entries on, a snapshot starts when four draws of odds 0.3 all fire, and
  takes one tick; a crash inside it loses the log.
- `retries`: a request times out with odds 0.35; a crash after 7 timeouts
  in a row applies a retried request twice.

    seedbed sweep examples.rare:lag --seeds 500
    seedbed explore examples.rare:lag --runs 500 --stop-on-failure
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

TICK = 0.05  # seconds between a node's steps
DURATION = 10.0  # seconds of faults


@dataclass
class Node:
    """What a node's steps move: a counter, a phase, a log and a snapshot's progress."""

    started: bool = False
    level: int = 0  # the lag, the phase, the failures in a row
    log: int = 0
    snapshot: int = 0  # ticks of a snapshot in progress (0: none)


async def lucky(why: str) -> bool:
    """Whether the failpoint `why` fired: a labelled draw of the run, with the
    scenario's failpoint odds, so a search can replay and branch on it."""
    try:
        await seedbed.failpoint(why)
    except seedbed.SimulatedFailure:
        return True
    return False


async def _lag(node: Node) -> None:
    missed = await lucky("an append to the follower is lost")
    node.level = node.level + 1 if missed else max(0, node.level - 1)
    seedbed.coverage("follower lag", node.level)
    seedbed.maximize("follower lag", node.level)


async def _handshake(node: Node) -> None:
    if await lucky("the peer answers this phase"):
        node.level = min(9, node.level + 1)
    elif not await lucky("the peer is still thinking"):
        node.level = 0
    seedbed.coverage("handshake phase", node.level)


async def _snapshot(node: Node) -> None:
    if node.snapshot:
        node.snapshot = 0  # one tick: the snapshot is written, the log compacted
        node.log = 0
    elif await lucky("a client appends an entry"):
        node.log += 1
    if not node.snapshot and node.log >= 30:
        starts = [await lucky("the snapshot timer fires") for _ in range(4)]
        node.snapshot = int(all(starts))
    seedbed.coverage("log entries", node.log.bit_length())
    seedbed.coverage("snapshot in progress", node.snapshot)


async def _retries(node: Node) -> None:
    node.level = node.level + 1 if await lucky("the request times out") else 0
    seedbed.coverage("failures in a row", min(node.level, 8))


_BROKEN: dict[str, tuple[Callable[[Node], bool], str]] = {
    "lag": (lambda node: node.level >= 17, "a crashed leader's acknowledged entries survive"),
    "handshake": (lambda node: node.level >= 9, "no session is left half open by a crash"),
    "snapshot": (lambda node: node.snapshot > 0, "a crash during a snapshot keeps the log"),
    "retries": (lambda node: node.level >= 7, "a retried request is applied once"),
}
_STEPS: dict[str, Callable[[Node], Awaitable[None]]] = {
    "lag": _lag,
    "handshake": _handshake,
    "snapshot": _snapshot,
    "retries": _retries,
}


def _setup(bug: str) -> Callable[[Simulation], None]:
    step = _STEPS[bug]
    broken, claim = _BROKEN[bug]

    def setup(sim: Simulation) -> None:
        node = Node()  # each run starts from nothing

        async def main() -> None:
            if node.started:  # a restart: the state is as the crash left it
                seedbed.always(not broken(node), claim, level=node.level)
            node.started = True
            while True:
                await asyncio.sleep(TICK)
                await step(node)

        sim.host("n1", main)

    return setup


ODDS = {"lag": 0.42, "handshake": 0.35, "snapshot": 0.3, "retries": 0.35}  # a failpoint's


def _scenario(bug: str) -> Scenario:
    faults = FaultProfile(crash_per_second=0.3, downtime_mean=0.1, max_down=1,
                          failpoint_probability=ODDS[bug])  # fmt: skip
    return Scenario(bug, _setup(bug), faults=faults, duration=DURATION)


lag = _scenario("lag")
handshake = _scenario("handshake")
snapshot = _scenario("snapshot")
retries = _scenario("retries")
