"""One simulated run of the store: replicas, clients, a nemesis, and the final checks.

This is the plain-Simulation form of the scenarios (usable before and beside
`seedbed.Scenario`): `run(seed, crashes=True)` builds the world, runs the
workload for `duration` virtual seconds under the chosen faults, heals
everything, waits for the group to settle, then checks the histories.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import seedbed
from examples.kvstore.cluster import Cluster
from examples.kvstore.workload import Workload


@dataclass(frozen=True)
class Faults:
    """The nemesis's repertoire for one run (all off: the happy path)."""

    crashes: bool = False
    partitions: bool = False
    client_crashes: bool = False
    interval: float = 1.0  # mean virtual seconds between fault actions


@dataclass(frozen=True)
class Plan:
    """Sizes and times of one run."""

    duration: float = 10.0
    single_key_clients: int = 2
    txn_clients: int = 2
    liveness_timeout: float = 20.0
    min_ok: int = 20


def build(sim: seedbed.Simulation, faults: Faults = Faults(), plan: Plan = Plan()) -> Workload:
    """Add the replicas, the clients, the nemesis and the checker to `sim`."""
    cluster = Cluster(sim)
    workload = Workload(cluster.peers, until=plan.duration)
    names = []
    for number in range(plan.single_key_clients):
        names.append(f"c{number + 1}")
        sim.client(names[-1], _bound(workload.single_key, names[-1]))
    for number in range(plan.txn_clients):
        names.append(f"t{number + 1}")
        sim.client(names[-1], _bound(workload.transactions, names[-1]))
    sim.client("nemesis", lambda: _nemesis(sim, cluster, faults, plan))
    sim.client("checker", lambda: _check(cluster, workload, plan))
    return workload


def _bound(method: Callable[[str], Awaitable[int]], name: str) -> Callable[[], Awaitable[int]]:
    async def main() -> int:
        return await method(name)

    return main


async def _nemesis(sim: seedbed.Simulation, cluster: Cluster, faults: Faults, plan: Plan) -> int:
    """Crash, restart and partition replicas until the workload's end, then heal all."""
    actions = 0
    loop = asyncio.get_running_loop()
    kinds = [
        kind for kind, on in (("crash", faults.crashes), ("partition", faults.partitions)) if on
    ]
    while kinds and loop.time() < plan.duration - 1.0:
        await asyncio.sleep(random.expovariate(1.0 / faults.interval))
        kind, name = random.choice(kinds), random.choice(cluster.names)
        if kind == "crash":
            sim.crash(name)
            await asyncio.sleep(random.uniform(0.1, 2.0))
            sim.restart(name)
        else:
            sim.isolate(name) if random.random() < 0.5 else sim.random_halves()
            await asyncio.sleep(random.uniform(0.2, 3.0))
            sim.heal()
        actions += 1
    sim.heal()
    return actions


async def _check(cluster: Cluster, workload: Workload, plan: Plan) -> int:
    """After the workload: the group settles (liveness), then the histories check out."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(plan.duration + 1.0)
    give_up = loop.time() + plan.liveness_timeout
    while not cluster.settled():
        if loop.time() > give_up:
            raise seedbed.LivenessFailure(
                f"kvstore did not settle within {plan.liveness_timeout}s after faults stopped: "
                + cluster.describe()
            )
        await asyncio.sleep(0.1)
    assert workload.ok_count >= plan.min_ok, f"only {workload.ok_count} operations succeeded"
    workload.check()
    return cluster.oracle.max_commit


def run(seed: int, faults: Faults = Faults(), plan: Plan = Plan(), **world: object) -> object:
    """Build and run one seed; returns the simulation's result (raises its failure)."""
    sim = seedbed.Simulation(seed, **world)  # type: ignore[arg-type]
    build(sim, faults, plan)
    return sim.run(max_time=plan.duration + plan.liveness_timeout + 30.0)
