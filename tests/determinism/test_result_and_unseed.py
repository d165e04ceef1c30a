"""The hash and the self-check see what a run did, not only its events."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import det_programs  # tests/determinism is on sys.path under pytest's default import mode
import pytest

import seedbed
from seedbed import Nondeterminism
from seedbed.aio._digest import result_digest, stable_repr


def test_the_self_check_catches_as_completed_over_coroutines_by_its_result() -> None:
    # The stdlib's as_completed orders its tasks by address: the events are
    # the same in every process, only the result differs.
    with pytest.raises(Nondeterminism) as caught:
        seedbed.check_determinism(det_programs.as_completed_unordered, seed=0, runs=3)
    message = str(caught.value)
    assert "the same events returned different results" in message
    assert "recorded: [" in message and "actual:   [" in message
    assert "seed=0" in message


def test_the_self_check_passes_as_completed_inside_a_run() -> None:
    expected = seedbed.run(det_programs.as_completed_order, seed=0)
    assert seedbed.check_determinism(det_programs.as_completed_order, seed=0, runs=3) == (
        expected.trace_hash
    )
    assert sorted(expected.value) == list(range(12))  # in the seed's drawn task order
    fifo = seedbed.run(det_programs.as_completed_order, seed=0, explore_tasks=False)
    assert fifo.value == list(range(12))  # creation order, without task-order exploration


def test_replay_compares_the_result_as_well_as_the_events(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    returned = {"value": 1}

    async def main() -> int:
        await asyncio.sleep(1)
        return returned["value"]

    seedbed.run(main, seed=4, trace=path)
    assert seedbed.replay(main, trace=path).value == 1
    returned["value"] = 2  # same events, another result
    with pytest.raises(Nondeterminism) as caught:
        seedbed.replay(main, trace=path)
    message = str(caught.value)
    assert "different result with the same events" in message
    assert "recorded: 1" in message and "actual:   2" in message
    assert "seed=4" in message and "replay:" in message


def test_the_hash_sees_how_the_program_used_the_seeded_randomness() -> None:
    draws = {"count": 1}

    async def main() -> None:
        for _ in range(draws["count"]):
            random.random()  # no event records this draw
        await asyncio.sleep(1)

    one = seedbed.run(main, seed=3).trace_hash
    assert seedbed.run(main, seed=3).trace_hash == one
    draws["count"] = 2
    assert seedbed.run(main, seed=3).trace_hash != one


class _Opaque:
    pass


class _BrokenRepr:
    def __repr__(self) -> str:
        raise ValueError("no")


def test_the_result_digest_ignores_addresses_and_set_order_but_not_list_order() -> None:
    assert result_digest([_Opaque()]) == result_digest([_Opaque()])
    first = {_Opaque() for _ in range(3)}
    assert result_digest({frozenset({"a", "b"}), "c"}) == result_digest(
        {"c", frozenset({"b", "a"})}
    )
    assert stable_repr(first).startswith("set({<")
    assert result_digest([1, 2]) != result_digest([2, 1])
    assert result_digest({"a": 1, "b": 2}) != result_digest({"b": 2, "a": 1})
    assert result_digest((1,)) != result_digest(1)
    assert stable_repr([_BrokenRepr()]) == "[<_BrokenRepr whose repr raised ValueError>]"


def test_a_run_result_and_the_json_line_carry_the_digest(tmp_path: Path) -> None:
    async def main() -> list[int]:
        return [1, 2, 3]

    result = seedbed.run(main, seed=0, trace=tmp_path / "t.jsonl")
    assert result.result_digest == result_digest([1, 2, 3])
    end = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[-1])
    assert end["result"] == result.result_digest and end["result_repr"] == "[1, 2, 3]"


def test_a_world_replay_compares_the_clients_values(tmp_path: Path) -> None:
    path = tmp_path / "world.jsonl"
    answer = {"value": "first"}

    async def client() -> str:
        await asyncio.sleep(1)
        return answer["value"]

    def simulate(**options: object) -> seedbed.SimulationResult:
        sim = seedbed.Simulation(seed=6, **options)  # type: ignore[arg-type]
        sim.client("c1", client)
        return sim.run()

    assert simulate(trace=path).values == {"c1": "first"}
    assert simulate(replay=path).values == {"c1": "first"}
    answer["value"] = "second"
    with pytest.raises(Nondeterminism) as caught:
        simulate(replay=path)
    message = str(caught.value)
    assert "recorded: {'c1': 'first'}" in message and "actual:   {'c1': 'second'}" in message
    assert "seed=6" in message
