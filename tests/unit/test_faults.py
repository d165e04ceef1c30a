"""FaultProfile validation and the nemesis: what it injects, what it counts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.unit import _scenarios

import seedbed
from seedbed import FaultProfile, Scenario, Simulation, UsageError
from seedbed.faults import draw_swarm
from seedbed.faults._profile import RATE_FIELDS


def test_no_profile_fields_means_no_faults() -> None:
    assert FaultProfile().total_rate == 0 and FaultProfile().rates() == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"crash_per_second": -1.0}, "FaultProfile.crash_per_second must be a finite number of "
         "events per second >= 0, got -1.0"),
        ({"clog_per_second": float("inf")}, "FaultProfile.clog_per_second must be"),
        ({"failpoint_probability": 2}, "FaultProfile.failpoint_probability must be a probability"),
        ({"max_down": 0}, "FaultProfile.max_down must be an int >= 1, got 0"),
        ({"buggify": "yes"}, "FaultProfile.buggify must be a bool, got 'yes'"),
        ({"downtime_mean": 0}, "FaultProfile.downtime_mean must be a finite number of seconds > 0"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_refused_on_construction(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as info:
        FaultProfile(**settings)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_swarm_turns_each_class_on_about_half_the_time() -> None:
    from seedbed._core import Entropy, Trace

    on = dict.fromkeys(RATE_FIELDS, 0)
    for seed in range(200):
        profile = draw_swarm(Entropy(seed, Trace()).stream("swarm"))
        for name in RATE_FIELDS:
            on[name] += getattr(profile, name) > 0
    assert all(70 < count < 130 for count in on.values()), on


def _world(sim: Simulation) -> None:
    """Three hosts that talk to each other over streams, and one client."""
    _scenarios.state.clear()
    _scenarios.state["down_max"] = 0

    async def host() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)

        await asyncio.start_server(handle, "0.0.0.0", 5000)
        me = seedbed.current_node()
        others = [name for name in ("h1", "h2", "h3") if name != me]
        while True:
            for other in others:
                try:
                    reader, writer = await asyncio.open_connection(other, 5000)
                    writer.write(b"ping\n")
                    await asyncio.wait_for(reader.readline(), 0.5)
                    writer.close()
                except (OSError, TimeoutError):
                    pass
            await asyncio.sleep(0.05)

    for name in ("h1", "h2", "h3"):
        sim.host(name, host)

    def count_down() -> bool:
        down = sum(not node.up for node in sim.nodes.all())
        _scenarios.state["down_max"] = max(_scenarios.state["down_max"], down)
        return True

    _scenarios.state["count_down"] = count_down


def _count_down() -> bool:
    return bool(_scenarios.state["count_down"]())


def test_every_fault_class_is_injected_and_counted() -> None:
    profile = FaultProfile(**dict.fromkeys(RATE_FIELDS, 1.0))
    scenario = Scenario("all", _world, faults=profile, duration=20.0)
    counts = scenario.run(seed=1).faults
    assert set(counts) == {name.removesuffix("_per_second") for name in RATE_FIELDS}
    for kind, count in counts.items():
        if kind != "client_crash":  # this world has no client
            assert count["injected"] >= 1, (kind, counts)
        assert count["effective"] <= count["injected"]
    assert counts["partition"]["effective"] >= 1  # the hosts talk all the time


def test_crashes_hit_running_hosts_and_never_more_than_max_down_at_once() -> None:
    profile = FaultProfile(crash_per_second=3.0, downtime_mean=2.0, max_down=1)
    scenario = Scenario("crashes", _world, faults=profile, duration=20.0, invariants=[_count_down])
    result = scenario.run(seed=3)
    assert result.faults["crash"]["injected"] >= 5
    assert result.faults["crash"]["effective"] == result.faults["crash"]["injected"]
    assert _scenarios.state["down_max"] == 1


def test_a_partition_of_a_silent_world_is_injected_but_not_effective() -> None:
    def silent(sim: Simulation) -> None:
        async def idle() -> None:
            await asyncio.sleep(3600)

        for name in ("a", "b", "c"):
            sim.host(name, idle)

    profile = FaultProfile(partition_per_second=2.0, clog_per_second=2.0)
    result = Scenario("silent", silent, faults=profile, duration=10.0).run(seed=0)
    assert result.faults["partition"]["injected"] >= 5
    assert result.faults["partition"]["effective"] == 0
    assert result.faults["clog"]["effective"] == 0


def test_the_liveness_phase_ends_every_fault_in_progress() -> None:
    seen: dict[str, Any] = {}

    def world(sim: Simulation) -> None:
        _world(sim)
        seen["sim"] = sim

    def healed() -> bool:
        sim = seen["sim"]
        links = sim.network._fabric.links._links.values()
        return all(node.up for node in sim.nodes.all()) and all(link.state == 0 for link in links)

    profile = FaultProfile(crash_per_second=1.0, partition_per_second=2.0, clog_per_second=2.0,
                           downtime_mean=1000.0, fault_duration_mean=1000.0)  # fmt: skip
    scenario = Scenario("heal", world, faults=profile, duration=5.0, liveness=[healed],
                        liveness_timeout=0.001)  # fmt: skip
    result = scenario.run(seed=5)
    assert result.faults["partition"]["injected"] >= 2  # none would have ended by itself
