"""Small scenarios the scenario and command-line tests run (module level, so
their replay commands name them)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests._echo import echo_client, echo_server

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

PORT = 9000
state: dict[str, Any] = {}


def echo_world(sim: Simulation) -> None:
    """A server echoing lines, and two clients asking it ten times each."""
    state.clear()
    state.update(answers=0, replicas=sim.params.choice("replicas", [1, 2, 3]))

    def note(index: int, answered: int | None) -> None:
        if answered is None:
            seedbed.sometimes(True, "a request failed")
        else:
            state["answers"] += answered

    client = echo_client(PORT, rounds=10, timeout=1.0, pause=0.5, note=note)
    sim.host("server", echo_server(PORT))
    sim.client("a", client)
    sim.client("b", client)


def answers_never_negative() -> bool:
    return bool(state["answers"] >= 0)


calm = Scenario("calm", echo_world, duration=60.0, invariants=[answers_never_negative])
swarm = Scenario("swarm", echo_world, faults="swarm", duration=20.0,
                 invariants=[answers_never_negative])  # fmt: skip
stormy = Scenario(
    "stormy", echo_world, faults=FaultProfile(crash_per_second=0.5, partition_per_second=0.5),
    duration=20.0,
)  # fmt: skip


def broken_at_three_seconds(sim: Simulation) -> None:
    """A value that is wrong from t=3 s to t=4 s only: an end-of-run check misses it."""
    state.clear()
    state["value"] = 0

    async def flapper() -> str:
        await asyncio.sleep(3.0)
        state["value"] = -1
        await asyncio.sleep(1.0)
        state["value"] = 0
        await asyncio.sleep(5.0)
        return "done"

    sim.client("flapper", flapper)


def value_not_negative() -> bool:
    assert state["value"] >= 0, f"value went negative: {state['value']}"
    return True


flapping = Scenario("flapping", broken_at_three_seconds, invariants=[value_not_negative])


def never_ready() -> bool:
    return False


def ready() -> bool:
    return True


stuck = Scenario("stuck", broken_at_three_seconds, liveness=[ready, never_ready],
                 liveness_timeout=5.0)  # fmt: skip


def spinning_world(sim: Simulation) -> None:
    async def spin() -> None:
        while True:  # a livelock: the loop is busy, virtual time barely moves
            await asyncio.sleep(0)

    sim.client("spinner", spin)


livelock = Scenario("livelock", spinning_world, max_steps=20_000)


def crashing_world(sim: Simulation) -> None:
    async def broken() -> None:
        await asyncio.sleep(2.0)
        {}["missing"]

    sim.client("broken", broken)


uncaught = Scenario("uncaught", crashing_world)


def plain_simulation(seed: int) -> Any:
    """A plain function that builds and runs its own Simulation."""

    async def work() -> int:
        await asyncio.sleep(1.0)
        assert seed != 3, "seed three is unlucky"
        return seed * 2

    sim = Simulation(seed=seed)
    sim.client("worker", work)
    return sim.run()


async def nests_a_simulation() -> None:
    plain_simulation(0)


async def serves_forever() -> None:
    while True:
        await asyncio.sleep(1.0)
