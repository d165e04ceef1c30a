"""FaultProfile validation and the nemesis: what it injects, what it counts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.unit import _scenarios

import seedbed
from seedbed import FaultProfile, Scenario, Simulation, SimulatorBug, UsageError
from seedbed._core import Entropy, Trace
from seedbed.faults import Nemesis, draw_swarm
from seedbed.faults._classes import FAULT_CLASSES, FaultClass, check_table
from seedbed.faults._episodes import Episode
from seedbed.faults._profile import DRAWN_RATE_FIELDS, RATE_FIELDS, swarm_settings


def test_no_profile_fields_means_no_faults() -> None:
    assert FaultProfile().total_rate == 0 and FaultProfile().rates() == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"crash_per_second": -1.0}, "FaultProfile.crash_per_second must be a finite number of "
         "events per second >= 0, got -1.0"),
        ({"clog_per_second": float("inf")}, "FaultProfile.clog_per_second must be"),
        ({"failpoint_probability": 2}, "FaultProfile.failpoint_probability must be a probability"),
        ({"max_down": 0}, "FaultProfile.max_down must be an int in [1, 2**62], got 0"),
        ({"buggify": "yes"}, "FaultProfile.buggify must be a bool, got 'yes'"),
        ({"downtime_mean": 0}, "FaultProfile.downtime_mean must be a number of seconds in (0, "),
    ],
)  # fmt: skip
def test_a_bad_setting_is_refused_on_construction(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as info:
        FaultProfile(**settings)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_swarm_turns_each_class_on_about_half_the_time() -> None:
    on = dict.fromkeys(RATE_FIELDS, 0)
    for seed in range(200):
        profile = draw_swarm(Entropy(seed, Trace()))
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
    rates = dict.fromkeys(RATE_FIELDS + DRAWN_RATE_FIELDS, 1.0)
    scenario = Scenario("all", _world, faults=FaultProfile(**rates), duration=20.0)
    counts = scenario.run(seed=1).faults
    assert set(counts) == {name.removesuffix("_per_second") for name in rates}
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
        links_open = all(link.state == "open" for link in sim.links())
        return links_open and all(node.up for node in sim.nodes.all())

    profile = FaultProfile(crash_per_second=1.0, partition_per_second=2.0, clog_per_second=2.0,
                           downtime_mean=1000.0, fault_duration_mean=1000.0)  # fmt: skip
    scenario = Scenario("heal", world, faults=profile, duration=5.0, liveness=[healed],
                        liveness_timeout=0.001)  # fmt: skip
    # Each run must pass its liveness check; some seeds cut links twice or more,
    # and none of those would have ended by itself.
    partitions = [scenario.run(seed=seed).faults["partition"]["injected"] for seed in range(8)]
    assert max(partitions) >= 2, partitions


# -- the fault-class table and swarm's streams ----------------------------------


def test_every_profile_rate_and_probability_is_one_entry_of_the_table() -> None:
    from dataclasses import fields

    suffixes = ("_per_second", "_probability")
    declared = [f.name for f in fields(FaultProfile) if f.name.endswith(suffixes)]
    assert declared == [fault.field for fault in FAULT_CLASSES]  # the table's order, too
    assert list(RATE_FIELDS) == [fault.field for fault in FAULT_CLASSES if fault.is_world]
    assert DRAWN_RATE_FIELDS == ("link_stall_per_second",)  # a rate the network draws
    assert all(fault.effective for fault in FAULT_CLASSES)


def _gremlin(ledger: Any) -> Any:
    return None


GREMLIN = FaultClass("gremlin", "gremlin_per_second", (0.01, 1.0), _gremlin, "never")


@pytest.mark.parametrize("where", [0, 4, len(FAULT_CLASSES)])
def test_adding_a_fault_class_changes_no_existing_seeds_profile(where: int) -> None:
    grown = (*FAULT_CLASSES[:where], GREMLIN, *FAULT_CLASSES[where:])
    turned_on = 0
    for seed in range(60):
        before = swarm_settings(Entropy(seed, Trace()), FAULT_CLASSES)
        after = swarm_settings(Entropy(seed, Trace()), grown)
        turned_on += "gremlin_per_second" in after
        after.pop("gremlin_per_second", None)
        assert after == before, seed
        assert draw_swarm(Entropy(seed, Trace())) == FaultProfile(
            **before, buggify=draw_swarm(Entropy(seed, Trace())).buggify
        )
    assert 15 < turned_on < 45  # the new class is drawn, on in about half the seeds


def test_a_swarm_seeds_profile_is_pinned() -> None:
    # Moved once, by design, when each class got its own stream (issue 22):
    # a change here means every swarm seed now means something else.
    assert _on(draw_swarm(Entropy(0, Trace()))) == PINNED_0
    assert _on(draw_swarm(Entropy(586, Trace()))) == PINNED_586


def _on(profile: FaultProfile) -> dict[str, Any]:
    defaults = FaultProfile().as_dict()
    return {key: value for key, value in profile.as_dict().items() if value != defaults[key]}


# The classes of issue 24 are the last entry of each, then issue 45's stalls:
# adding them kept every earlier class's draw (each class has its own stream).
PINNED_0 = {"crash_per_second": 0.03861, "clog_per_second": 0.2948,
            "disk_fault_per_second": 0.1014, "datagram_loss_probability": 0.01365,
            "clock_skew_per_second": 0.02704, "operation_crash_per_second": 0.02922,
            "link_stall_per_second": 0.4977}  # fmt: skip
PINNED_586 = {"partition_per_second": 0.03432, "clog_per_second": 0.0584,
              "clock_jump_per_second": 0.2713, "disk_fault_per_second": 0.2012,
              "client_crash_per_second": 0.08485, "clock_skew_per_second": 0.04202,
              "misdirected_write_per_second": 0.05842,
              "operation_crash_per_second": 0.1209, "pause_per_second": 0.02623,
              "link_stall_per_second": 0.2681, "node_stall_per_second": 0.1301}  # fmt: skip


# -- the nemesis's own rules: broken ones are SimulatorBugs ----------------------


def _broken_inside(action: Any, match: str) -> None:
    """Run `action(nemesis)` inside a small world's run; it must fail as a SimulatorBug."""

    async def idle() -> None:
        await asyncio.sleep(3600)

    sim = Simulation(seed=0)
    for name in ("a", "b", "c"):
        sim.host(name, idle)
    profile = FaultProfile(crash_per_second=1.0, clog_per_second=1.0)
    nemesis = Nemesis(sim, profile, sim.loop.entropy.stream("nemesis"))
    sim.at(0.5, lambda: action(nemesis))
    with pytest.raises(SimulatorBug, match=match) as info:
        sim.run(max_time=2.0)
    assert "seed=0" in str(info.value) or "seed=0" in "".join(info.value.__notes__)


def _episode(kind: str, effective: bool = False, **where: Any) -> Episode:
    did = {"datagrams held": 1} if effective else {}
    return Episode(kind, lambda: None, effect=lambda: did, **where)


def test_a_link_in_two_faults_at_once_is_a_simulator_bug() -> None:
    def twice(nemesis: Nemesis) -> None:
        nemesis._ledger.begin(_episode("clog", links=[("a", "b")]), 5.0)
        nemesis._ledger.begin(_episode("clog", links=[("b", "c"), ("a", "b")]), 5.0)

    _broken_inside(twice, "a link is never in two faults at once")


def test_an_episode_that_ends_twice_is_a_simulator_bug() -> None:
    def twice(nemesis: Nemesis) -> None:
        episode = _episode("clog", links=[("a", "b")])
        nemesis._ledger.begin(episode, 5.0)
        nemesis._ledger.finish(episode)
        nemesis._ledger.finish(episode)

    _broken_inside(twice, "an episode that began ends once")


def test_a_node_crashed_again_before_it_restarts_is_a_simulator_bug() -> None:
    def twice(nemesis: Nemesis) -> None:
        nemesis._ledger.begin(_episode("crash", crashed="a", bounded=False), 5.0)
        nemesis._ledger.begin(_episode("crash", crashed="a", bounded=False), 5.0)

    _broken_inside(twice, "a crashed node is not crashed again before it restarts")


def test_a_host_down_beyond_max_down_is_a_simulator_bug() -> None:
    def too_many(nemesis: Nemesis) -> None:  # three nodes: max_down is 1
        nemesis._ledger.begin(_episode("crash", down=["a"], crashed="a"), 5.0)
        nemesis._ledger.begin(_episode("crash", down=["b"], crashed="b"), 5.0)

    _broken_inside(too_many, "a host goes down only while fewer than max_down are")


def test_more_effective_faults_than_injected_is_a_simulator_bug() -> None:
    def uncounted(nemesis: Nemesis) -> None:  # an episode never counted as injected
        episode = _episode("clog", effective=True, links=[("a", "b")])
        nemesis._ledger.begin(episode, 5.0)
        nemesis._ledger.finish(episode)

    _broken_inside(uncounted, "a fault class is effective at most as often as injected")


def test_injecting_in_the_liveness_phase_is_a_simulator_bug() -> None:
    def after_stop(nemesis: Nemesis) -> None:
        nemesis.stop()
        nemesis._inject(FAULT_CLASSES[0])

    _broken_inside(after_stop, "the liveness phase injects nothing")


def test_a_swarm_draw_outside_its_classs_range_is_a_simulator_bug() -> None:
    import math

    from seedbed.faults._profile import _log_uniform

    class Beyond:
        def uniform(self, low: float, high: float, reason: str) -> float:
            return math.log(2.0)  # above every class's range

    with pytest.raises(SimulatorBug, match="a drawn swarm setting lies in its class's range"):
        _log_uniform(Beyond(), FAULT_CLASSES[0], "swarm: crash_per_second")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("entry", "rule"),
    [
        (("x", "x_per_second", (0.5, 0.1)), "swarm range is 0 < low < high"),
        (("x", "x_per_second", (0.012345, 0.5)), "ends of 4 significant digits"),
        (("x", "y_per_second", (0.1, 0.5)), "field is its name and its kind's suffix"),
    ],
)
def test_a_malformed_table_entry_is_a_simulator_bug(entry: Any, rule: str) -> None:
    with pytest.raises(SimulatorBug, match=rule):
        FaultClass(*entry, _gremlin, "never")
    with pytest.raises(SimulatorBug, match="fault class names are unique"):
        check_table((*FAULT_CLASSES, FAULT_CLASSES[0]))
