"""Scenario invariants and liveness predicates in the assertion catalog (issue 28.6).

They ran after every step yet a sweep's JSON said `"assertions": {}` and the
report "No seed reported assertions". Each is now an entry (kind
`invariant` or `liveness`): how many times it was checked and held, in
`Scenario.run`'s result, a failure's report, the sweep's records and the
report's tallies, counted without a trace event (trace hashes stay put).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from seedbed import Scenario, Simulation
from seedbed._harness.report._aggregate import Aggregate
from seedbed._harness.sweeps._record import build
from seedbed._harness.targets import run_target

progress = {"rounds": 0}


def world(sim: Simulation) -> None:
    progress["rounds"] = 0

    async def worker() -> None:
        for _ in range(5):
            await asyncio.sleep(0.1)
            progress["rounds"] += 1

    sim.client("worker", worker)


def rounds_never_negative() -> bool:
    return progress["rounds"] >= 0


def rounds_below_three() -> bool:
    return progress["rounds"] < 3


def all_rounds_done() -> bool:
    return progress["rounds"] == 5


healthy = Scenario(
    "healthy", world, invariants=[rounds_never_negative], liveness=[all_rounds_done], duration=1.0
)
breaking = Scenario(
    "breaking", world, invariants=[rounds_never_negative, rounds_below_three], duration=1.0
)


def test_a_passing_run_counts_every_check_of_its_invariants_and_liveness() -> None:
    result = healthy.run(4)
    invariant = result.assertions["invariant rounds_never_negative"]
    assert invariant["kind"] == "invariant"
    assert invariant["evaluated"] == invariant["true"] > 5  # after every step with node code
    assert invariant["location"].endswith(
        f"test_scenario_catalog.py:{_line(rounds_never_negative)}"
    )
    live = result.assertions["liveness all_rounds_done"]
    assert live["kind"] == "liveness" and live["evaluated"] >= live["true"] >= 1


def test_a_broken_invariant_counts_its_one_failed_check() -> None:
    _, error = breaking.execute(4, last_events=False)
    assert error is not None and error.report is not None
    catalog = error.report.assertions
    broken, held = (
        catalog["invariant rounds_below_three"],
        catalog["invariant rounds_never_negative"],
    )
    assert broken["evaluated"] - broken["true"] == 1 and broken["true"] > 0
    assert held["evaluated"] == held["true"] == broken["evaluated"]


def test_counting_does_not_change_the_trace() -> None:
    plain = Scenario("healthy", world, duration=1.0, liveness=[all_rounds_done])
    assert plain.run(4).trace_hash == healthy.run(4).trace_hash


def test_the_sweep_record_and_the_report_carry_them() -> None:
    outcome = run_target(healthy, 4)
    record = build(4, outcome.replay, outcome, 0.1)
    assert set(record["assertions"]) == {
        "invariant rounds_never_negative",
        "liveness all_rounds_done",
    }
    aggregate = Aggregate(Path("results.jsonl"))
    aggregate.add_seed(record)
    tally = aggregate.assertions["invariant rounds_never_negative"]
    assert tally.kind == "invariant" and tally.evaluated == tally.true > 0


def _line(function: object) -> int:
    return function.__code__.co_firstlineno  # type: ignore[attr-defined]
