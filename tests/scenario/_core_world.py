"""Five hosts that count their ticks while up, under heavy crashes and cuts:
a healed core must progress while the other hosts keep failing."""

from __future__ import annotations

import asyncio
from typing import Any

from seedbed import FaultProfile, Scenario, Simulation

HOSTS = ("n1", "n2", "n3", "n4", "n5")
state: dict[str, Any] = {}


def world(sim: Simulation) -> None:
    """Each host ticks every 0.1 s while up; `state["since"]` marks when a check began."""
    state.clear()
    state.update(ticks=dict.fromkeys(HOSTS, 0), sim=sim, since=None, starts=[])

    def ticker(name: str) -> Any:
        async def main() -> None:
            state["starts"].append((asyncio.get_running_loop().time(), name))
            while True:
                state["ticks"][name] += 1
                await asyncio.sleep(0.1)

        return main

    for name in HOSTS:
        sim.host(name, ticker(name))


def _progressed(names: tuple[str, ...]) -> bool:
    """Every one of `names` ticked 20 times since the first check (2 s of being up)."""
    if state["since"] is None:
        state["since"] = dict(state["ticks"])
    return all(state["ticks"][name] - state["since"][name] >= 20 for name in names)


def core_progressed() -> bool:
    core = state["sim"].liveness_core
    assert core is not None, "the healed core is named before the predicates run"
    return _progressed(core)


def all_progressed() -> bool:
    return _progressed(HOSTS)


STORM = FaultProfile(crash_per_second=3.0, downtime_mean=5.0, partition_per_second=1.0,
                     fault_duration_mean=5.0, max_down=2)  # fmt: skip


def _scenario(name: str, predicate: Any, core: Any) -> Scenario:
    return Scenario(name, world, faults=STORM, duration=5.0, liveness=[predicate],
                    liveness_timeout=5.0, liveness_core=core)  # fmt: skip


core_converges = _scenario("core", core_progressed, "majority")
named_core_converges = _scenario("named core", core_progressed, ["n2", "n4", "n5"])
all_must_converge = _scenario("all, others failing", all_progressed, "majority")
all_healed = _scenario("all, healed", all_progressed, None)
