"""A node is a process: memory new at every start, module state its own with `isolate`."""

from __future__ import annotations

import asyncio
import functools
import warnings

import leaderlib  # tests/unit is on sys.path under pytest's default import mode
import pytest
from leaderlib import State

import seedbed
from seedbed import SeedbedWarning, Simulation, UsageError


class Ledger:
    """A service whose lock is built with the object, as the trial's job queue did."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()

    async def start(self) -> str:
        if self.lock.locked():
            return "lock still held from before the crash"
        await self.lock.acquire()  # held when the crash comes
        await asyncio.sleep(10)
        return "ran"


def test_a_bound_method_main_built_before_the_start_is_warned_about_with_the_fix() -> None:
    sim = Simulation(seed=0)
    with pytest.warns(SeedbedWarning) as caught:
        sim.host("ledger", Ledger().start)
    message = str(caught[0].message)
    assert "node 'ledger'" in message and "Ledger" in message
    assert "sim.host('ledger', lambda: Ledger().start())" in message
    assert caught[0].filename == __file__  # it points at the user's call
    sim.run(max_time=1)


def test_a_main_that_builds_its_object_inside_is_fresh_at_every_restart() -> None:
    results: list[str] = []

    async def main() -> None:
        results.append(await Ledger().start())

    sim = Simulation(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeedbedWarning)
        sim.host("ledger", main)
        sim.host("other", functools.partial(asyncio.sleep, 1))
    sim.advance(1)
    sim.bounce("ledger")
    sim.advance(11)
    assert results == ["ran"]  # the second start took its own, free lock


def test_with_a_prebuilt_object_the_lock_held_at_the_crash_is_still_held() -> None:
    ledger = Ledger()
    results: list[str] = []

    async def main() -> None:
        results.append(await ledger.start())

    sim = Simulation(seed=0)
    sim.host("ledger", main)
    sim.advance(1)
    sim.bounce("ledger")
    sim.advance(1)
    assert results == ["lock still held from before the crash"]  # what the warning is for


def test_nodes_of_a_one_node_per_process_library_share_its_class_attribute() -> None:
    State.leader = None
    leaderlib.peers.clear()
    sim = Simulation(seed=1)
    sim.client("a", leaderlib.serve)
    sim.client("b", leaderlib.serve)
    values = sim.run(max_time=5).values
    assert {leader for leader, _, _ in values.values()} == {values["a"][0]}  # one leader
    State.leader = None
    leaderlib.peers.clear()


def test_isolated_nodes_keep_their_own_class_attribute_and_module_globals() -> None:
    sim = Simulation(seed=1)
    sim.client("a", leaderlib.serve, isolate=["leaderlib"])
    sim.client("b", lambda: leaderlib.serve(), isolate=["leaderlib"])
    values = sim.run(max_time=5).values
    assert values == {"a": ("a", ["a"], 1), "b": ("b", ["b"], 1)}
    assert State.leader is None and leaderlib.peers == []  # the shared copy is untouched


def test_an_isolated_node_starts_from_fresh_module_state_after_a_restart() -> None:
    seen: list[tuple[str | None, list[str], int]] = []

    async def main() -> None:
        seen.append(await leaderlib.serve())
        await asyncio.sleep(100)

    sim = Simulation(seed=2)
    sim.host("n1", main, isolate=["leaderlib"])
    sim.advance(1)
    sim.bounce("n1")
    sim.advance(1)
    assert seen == [("n1", ["n1"], 1), ("n1", ["n1"], 1)]  # a new process, new modules
    sim.run(max_time=3)


@pytest.mark.parametrize(
    ("isolate", "says"),
    [
        ("leaderlib", "takes a list of module names"),
        (["no_such_module_here"], "does not import"),
        (["seedbed"], "cannot copy 'seedbed'"),
        ([""], "names modules"),
    ],
)
def test_a_bad_isolate_is_a_one_line_usage_error(isolate: object, says: str) -> None:
    sim = Simulation(seed=0)
    with pytest.raises(UsageError) as caught:
        sim.client("a", leaderlib.serve, isolate=isolate)  # type: ignore[arg-type]
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_scenario_node_can_be_isolated_too() -> None:
    def setup(sim: Simulation) -> None:
        for name in ("a", "b"):
            sim.client(name, leaderlib.serve, isolate=["leaderlib"])

    result = seedbed.Scenario(name="isolated", setup=setup, duration=1.0).run(seed=0)
    assert result.values == {"a": ("a", ["a"], 1), "b": ("b", ["b"], 1)}
