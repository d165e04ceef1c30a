"""Upgrades inside a scenario: new code on old disks, rolled out one node at a time."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from examples import upgrade

from seedbed import InvariantViolation, Scenario, Simulation, UsageError
from seedbed._harness.targets import run_target


def test_a_version_that_cannot_read_the_old_disk_loses_acknowledged_writes() -> None:
    outcome = run_target(upgrade.upgrade_breaks, 0)
    assert isinstance(outcome.error, InvariantViolation)
    assert "acknowledged writes missing after a restart" in str(outcome.error)
    assert outcome.faults is not None and outcome.faults["upgrade"]["effective"] >= 1
    report = outcome.error.report
    assert report is not None
    assert any("upgrade store (to the new version" in entry["text"] for entry in report.story)


def test_a_compatible_version_passes_its_rolling_upgrades_and_rollbacks() -> None:
    rollbacks = 0
    for seed in range(16):
        outcome = run_target(upgrade.upgrade_compatible, seed)
        assert outcome.error is None, f"seed {seed}: {outcome.error}"
        assert outcome.faults is not None
        rollbacks += outcome.faults["upgrade"]["injected"] - 1
    assert 1 <= rollbacks <= 8  # one seed in four rolls back (and forward again)


VERSIONS: list[tuple[str, str, float]] = []  # (node, version, started at)


def versioned(version: str) -> Any:
    async def main() -> None:
        VERSIONS.append((str(asyncio.current_task().get_name()).split("#")[0], version,
                         asyncio.get_running_loop().time()))  # fmt: skip
        await asyncio.Event().wait()

    return main


def cluster(sim: Simulation) -> None:
    for name in ("n1", "n2", "n3"):
        sim.host(name, versioned("v1"))


def rolling(seed: int) -> list[tuple[str, str, float]]:
    VERSIONS.clear()
    scenario = Scenario(
        "rolling", cluster, duration=6.0, liveness=[lambda: True], liveness_timeout=1.0,
        upgrades=lambda sim: {name: versioned("v2") for name in ("n1", "n2", "n3")},
    )  # fmt: skip
    scenario.run(seed=seed)
    return list(VERSIONS)


def test_nodes_upgrade_one_at_a_time_and_the_run_ends_all_new() -> None:
    during_faults = 0
    for seed in range(6):
        starts = rolling(seed)
        last = {node: version for node, version, _ in starts}
        assert last == {"n1": "v2", "n2": "v2", "n3": "v2"}  # all new at the end
        upgraded = [t for _, version, t in starts if version == "v2"]
        assert len(set(upgraded)) == len(upgraded)  # one at a time: old and new side by side
        during_faults += sum(t < 6.0 for t in upgraded)
    assert during_faults >= 6  # most upgrades came while the workload ran, not at its end


def test_the_same_seed_upgrades_the_same_way() -> None:
    assert rolling(3) == rolling(3)


def test_a_scenario_without_upgrades_draws_nothing_for_them() -> None:
    plain = Scenario("plain", cluster, duration=1.0)
    with_none = Scenario("plain", cluster, duration=1.0, upgrades=None)
    assert plain.run(seed=2).trace_hash == with_none.run(seed=2).trace_hash


@pytest.mark.parametrize(
    ("upgrades", "says"),
    [({"n1": "not a main"}, "takes {node name: new main}"), ({"n9": versioned("v2")}, "'n9'")],
)
def test_bad_upgrades_are_one_line_usage_errors(upgrades: Any, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        Scenario("bad", cluster, duration=1.0, upgrades=upgrades).run(seed=0)


def test_stop_keeps_what_the_process_wrote_and_set_main_runs_new_code() -> None:
    async def write() -> None:
        os.makedirs("/srv", exist_ok=True)
        with open("/srv/f", "w") as f:
            f.write("written, never fsynced")
        await asyncio.Event().wait()

    async def read() -> str:
        with open("/srv/f") as f:
            return f.read()

    outcomes = set()
    for seed in range(6):
        sim = Simulation(seed=seed)
        sim.host("n1", write)
        sim.advance(1.0)
        assert sim.stop("n1") and not sim.stop("n1")
        assert sim.set_main("n1", read) is write

        async def client() -> None:
            await asyncio.sleep(0.5)

        sim.client("c", client)
        sim.restart("n1")
        sim.advance(0.1)
        outcomes.add(sim.nodes.get("n1").task.result())  # type: ignore[union-attr]
        sim.run(max_time=3.0)
    assert outcomes == {"written, never fsynced"}  # a stop is no power loss
