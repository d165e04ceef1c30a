"""Pause: a node's code stops for a while as the others run (`Simulation.pause`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from seedbed import FaultProfile, Scenario, Simulation, UsageError


def _ticker(log: list[tuple[str, float]], name: str, period: float) -> Any:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(period)
            log.append((name, round(loop.time(), 3)))

    return main


def test_a_paused_node_runs_nothing_while_the_others_run() -> None:
    log: list[tuple[str, float]] = []
    sim = Simulation(seed=0)
    sim.host("a", _ticker(log, "a", 0.1))
    sim.host("b", _ticker(log, "b", 0.1))
    sim.advance(0.55)
    assert sim.pause("a", 1.0)
    sim.advance(2.0)
    sim.run(max_time=sim.loop.time())  # end it: nothing left pending
    a_times = [t for name, t in log if name == "a"]
    b_times = [t for name, t in log if name == "b"]
    assert not any(0.56 < t < 1.55 for t in a_times)  # a ran nothing while paused
    assert any(0.56 < t < 1.55 for t in b_times)  # b kept going
    assert any(t >= 1.55 for t in a_times)  # a resumed


def test_timers_due_during_a_pause_fire_late_in_deadline_order() -> None:
    fired: list[tuple[str, float]] = []

    async def node() -> None:
        loop = asyncio.get_running_loop()
        for delay, label in ((0.9, "third"), (0.3, "first"), (0.6, "second")):
            loop.call_later(delay, lambda label=label: fired.append((label, loop.time())))
        await asyncio.sleep(3600)

    sim = Simulation(seed=1)
    sim.host("n", node)
    sim.advance(0.1)
    assert sim.pause("n", 1.0)
    sim.advance(2.0)
    sim.run(max_time=sim.loop.time())  # end it: nothing left pending
    assert [label for label, _ in fired] == ["first", "second", "third"]
    assert all(t >= 1.1 for _, t in fired)  # all late: after the resume


def test_a_lease_expires_around_a_paused_holder() -> None:
    # The holder renews its lease every 0.1 s; the watcher sees it expire
    # (0.5 s without renewal) only because the holder was paused.
    state = {"renewed": 0.0, "expired": False}

    async def holder() -> None:
        loop = asyncio.get_running_loop()
        while True:
            state["renewed"] = loop.time()
            await asyncio.sleep(0.1)

    async def watcher() -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(0.05)
            state["expired"] = state["expired"] or loop.time() - state["renewed"] > 0.5

    for paused in (False, True):
        state.update(renewed=0.0, expired=False)
        sim = Simulation(seed=2)
        sim.host("holder", holder)
        sim.host("watcher", watcher)
        sim.advance(1.0)
        if paused:
            assert sim.pause("holder", 1.0)
        sim.advance(2.0)
        sim.run(max_time=sim.loop.time())  # end it: nothing left pending
        assert state["expired"] is paused


def test_pause_needs_a_running_node_and_lanes() -> None:
    async def idle() -> None:
        await asyncio.sleep(3600)

    sim = Simulation(seed=0, interleave=False)
    sim.host("n", idle)
    sim.advance(0.1)
    assert sim.pause("n", 1.0) is False
    sim.run(max_time=sim.loop.time())
    sim = Simulation(seed=0)
    sim.host("n", idle)
    sim.advance(0.1)
    assert sim.pause("n", 1.0) and not sim.pause("n", 1.0)  # one pause at a time
    assert sim.resume("n") and not sim.resume("n")
    with pytest.raises(UsageError, match=r"^Simulation.pause\(seconds=...\) must be a number"):
        sim.pause("n", 0)
    sim.run(max_time=sim.loop.time())


def test_the_nemesis_pauses_nodes_and_counts_them() -> None:
    def world(sim: Simulation) -> None:
        for name in ("h1", "h2", "h3"):
            sim.host(name, _ticker([], name, 0.05))

    profile = FaultProfile(pause_per_second=1.0)
    scenario = Scenario("pauses", world, faults=profile, duration=20.0)
    result = scenario.run(seed=3)
    counts = result.faults["pause"]
    assert counts["injected"] >= 5 and counts["effective"] == counts["injected"], counts
    assert scenario.run(seed=3).trace_hash == result.trace_hash
