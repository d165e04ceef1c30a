"""Scenarios: phases, continuous invariants, liveness, budgets, swarm, reports."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.unit import _scenarios

import seedbed
from seedbed import (
    BudgetExceeded,
    FaultProfile,
    InvariantViolation,
    LivenessFailure,
    Scenario,
    ScenarioResult,
    Simulation,
    UncaughtError,
    UsageError,
)

REPO = Path(__file__).resolve().parents[2]
TARGETS = "tests/unit/_scenarios.py"


def test_a_calm_scenario_returns_the_clients_values_and_its_catalog() -> None:
    result = _scenarios.calm.run(seed=1)
    assert isinstance(result, ScenarioResult)
    assert result.values == {"a": 10, "b": 10}
    assert result.scenario == "calm" and result.seed == 1
    # No fault profile: only the network's own stall episodes (its default timing).
    assert result.profile is None and set(result.faults) == {"link_stall"}
    assert 5.0 < result.virtual_time < 6.0  # the clients returned: the run ended early
    assert result.steps > 0 and len(result.trace_hash) == 16
    # Nothing failed, so no `sometimes` ran; its one invariant held at every check.
    [(name, entry)] = result.assertions.items()
    assert name == "invariant answers_never_negative" and entry["kind"] == "invariant"
    assert entry["evaluated"] == entry["true"] > 0
    json.dumps([result.profile, result.faults, result.assertions])  # JSON-able


def test_the_same_seed_gives_the_same_result_and_another_seed_another_hash() -> None:
    first, again = _scenarios.stormy.run(seed=4), _scenarios.stormy.run(seed=4)
    assert first == again
    assert _scenarios.stormy.run(seed=5).trace_hash != first.trace_hash


def test_an_invariant_is_checked_continuously_and_names_the_step_it_broke_at() -> None:
    with pytest.raises(InvariantViolation) as info:
        _scenarios.flapping.run(seed=0)
    error = info.value
    assert "invariant value_not_negative broke: value went negative: -1" in error.message
    assert error.context is not None
    assert 3.0 <= error.context.virtual_time_ns / 1e9 < 3.01  # at the break, not at the end
    line = int(_first_line(_scenarios.value_not_negative)) + 1  # its assert statement
    assert error.report.location == f"tests/unit/_scenarios.py:{line}"


def _first_line(func: object) -> str:
    return str(func.__code__.co_firstlineno)  # type: ignore[attr-defined]


def test_the_invariant_interval_knob_thins_the_checks() -> None:
    thinned = Scenario(
        "thin",
        _scenarios.broken_at_three_seconds,
        invariants=[_scenarios.value_not_negative],
        invariant_interval=1000,
    )
    assert thinned.run(seed=0).values == {"flapper": "done"}  # the one-second break slips through
    refused = r"Scenario.invariant_interval must be an int in \[1, 2\*\*62\], got 0"
    with pytest.raises(UsageError, match=refused):
        Scenario("x", _scenarios.echo_world, invariant_interval=0)


def test_liveness_failure_names_only_the_predicates_still_false() -> None:
    with pytest.raises(LivenessFailure) as info:
        _scenarios.stuck.run(seed=0)
    message = info.value.message
    assert "1 property still false 5s after the faults stopped: never_ready (returned False)" in (
        message
    )
    assert "ready (" not in message.replace("never_ready (", "")


def test_the_liveness_phase_heals_the_world_so_a_crashed_server_answers_again() -> None:
    answered = Scenario(
        "heals",
        _scenarios.echo_world,
        faults=FaultProfile(crash_per_second=2.0, downtime_mean=1000.0, max_down=1),
        duration=3.0,
        liveness=[lambda: _scenarios.state["answers"] >= 1],
        liveness_timeout=30.0,
    )
    result = answered.run(seed=2)
    assert result.faults["crash"]["injected"] >= 1  # down "for 1000 s" but restarted by the heal


def test_the_liveness_phase_stops_buggify_and_failpoints() -> None:
    seen: dict[str, list[bool]] = {"fault": [], "liveness": []}
    failures = []

    async def flaky_worker() -> None:
        phase = "fault"
        for _ in range(400):
            fired = seedbed.buggify("flaky worker: misbehave")
            try:
                await seedbed.failpoint("flaky worker: fail")
            except seedbed.SimulatedFailure:
                failures.append(phase)
                fired = True
            seen[phase].append(fired)
            await asyncio.sleep(0.05)
            phase = "liveness" if asyncio.get_running_loop().time() > 2.0 else "fault"

    def world(sim: Simulation) -> None:
        sim.host("worker", flaky_worker)

    scenario = Scenario(
        "flaky",
        world,
        faults=FaultProfile(buggify=True, failpoint_probability=0.5),
        duration=2.0,
        liveness=[lambda: len(seen["liveness"]) >= 100],
        liveness_timeout=10.0,
    )
    scenario.run(seed=3)
    assert any(seen["fault"]) and "fault" in failures  # both fired while faults lasted
    assert not any(seen["liveness"]) and "liveness" not in failures


def test_a_livelocked_world_ends_in_budget_exceeded_not_a_hang() -> None:
    with pytest.raises(BudgetExceeded, match="max_steps=20000") as info:
        _scenarios.livelock.run(seed=0)
    assert info.value.report is not None
    assert info.value.report.replay.endswith("--seed 0")


def test_the_default_budget_is_the_phases_plus_a_margin() -> None:
    scenario = Scenario("s", _scenarios.echo_world, duration=30.0, liveness=[bool],
                        liveness_timeout=20.0)  # fmt: skip
    assert scenario.budget_time == 55.0
    assert Scenario("s", _scenarios.echo_world, duration=100.0).budget_time == 110.0


def test_an_uncaught_exception_becomes_uncaught_error_with_the_original_as_cause() -> None:
    with pytest.raises(UncaughtError) as info:
        _scenarios.uncaught.run(seed=0)
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.message == "KeyError: 'missing'"
    assert info.value.report.location.endswith(
        f"_scenarios.py:{int(_first_line(_scenarios.crashing_world)) + 3}"
    )


def test_the_failure_report_reads_as_documented() -> None:
    with pytest.raises(InvariantViolation) as info:
        _scenarios.flapping.run(seed=0)
    lines = str(info.value).splitlines()
    assert lines[0] == "invariant value_not_negative broke: value went negative: -1"
    assert lines[1].startswith("  seed=0 scenario=flapping step=")
    assert " t=3.00" in lines[1]
    line = int(_first_line(_scenarios.value_not_negative)) + 1
    assert lines[2] == f"  at: tests/unit/_scenarios.py:{line}"  # relative to the directory
    assert lines[3] == "  fault profile: no faults"
    # the run's events without draws and seedbed's own tasks (--events all shows them)
    assert lines[4] == "  last 3 events, draws hidden: --events all shows them:"
    assert lines[5] == "    t=0.000000s net.start flapper"
    # at 3 s on a 1 ms tick, plus the CPU time of the steps before it (exact step times)
    broke = "    t=3.001009s invariant broke value_not_negative"
    assert lines[7] == broke
    assert lines[-3] == "  view:   seedbed view tests.unit._scenarios:flapping --seed 0"
    target = "tests.unit._scenarios:flapping --seed 0"
    assert lines[-2] == f"  shrink: seedbed shrink {target} --out shrunk.json"
    assert lines[-1] == f"  replay: seedbed run {target}"
    everything = info.value.report.describe(events="all").splitlines()
    assert "  last 9 events:" in everything  # the whole run: nine events and a time jump
    assert "    t=0.000000s task 1 Task-1 _run_main" in everything  # 3.11-3.13 name it so
    assert "    t=0.000000s draw loop: which node runs next = 0" in everything


def test_a_swarm_failure_report_shows_the_drawn_profile_and_the_faults_injected() -> None:
    for seed in range(40):
        result, error = _scenarios.swarm.execute(seed)
        if result is not None and result.faults:
            break
    assert result is not None and result.profile is not None
    failing = Scenario("swarm_fails", _scenarios.echo_world, faults="swarm", duration=20.0,
                       invariants=[lambda: _scenarios.state["answers"] < 3])  # fmt: skip
    _, error = failing.execute(seed)
    assert error is not None and error.report.profile == result.profile
    text = str(error)
    assert "  fault profile: " in text and "no faults" not in text
    assert f"world parameters: replicas={result.params['replicas']}" in text


def test_swarm_draws_at_least_fifteen_distinct_profiles_in_twenty_seeds() -> None:
    profiles = set()
    for seed in range(20):
        result, error = _scenarios.swarm.execute(seed)
        profile = result.profile if result is not None else error.report.profile  # type: ignore[union-attr]
        profiles.add(json.dumps(profile, sort_keys=True))
    assert len(profiles) >= 15


def test_swarm_draws_world_parameters_and_plain_runs_take_the_defaults() -> None:
    assert _scenarios.calm.run(seed=0).params == {"replicas": 1}
    drawn = {_scenarios.swarm.run(seed=seed).params["replicas"] for seed in range(12)}
    assert drawn == {1, 2, 3}


_CHILD = """
import json, sys
sys.path.insert(0, {repo!r})
from tests.unit import _scenarios
r = _scenarios.swarm.run(seed=7)
print(json.dumps([r.trace_hash, r.steps, r.values, r.profile, r.faults], sort_keys=True))
"""


def test_a_swarm_seed_replays_in_fresh_processes_under_different_hash_seeds() -> None:
    outputs = []
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", _CHILD.format(repo=str(REPO))],
            env=env, capture_output=True, text=True, check=True, cwd=REPO,
        )  # fmt: skip
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and outputs[0].startswith('["')


def test_the_trace_header_records_the_world_configs_and_the_profile(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    scenario = Scenario("traced", _scenarios.echo_world, faults="swarm", duration=5.0,
                        network=seedbed.NetworkConfig(latency_mean=0.002))  # fmt: skip
    result = scenario.run(seed=3, trace=path)
    header = json.loads(path.read_text().splitlines()[0])
    assert header["network"]["latency_mean"] == 0.002
    assert header["disk"]["sector_size"] == 512
    assert header["clock"] == {"offset_max": 0.0, "drift_max": 0.0}
    assert header["scenario"] == "traced"
    assert header["profile"] == result.profile
    assert header["params"] == result.params


def test_a_plain_simulation_trace_header_records_its_configs_too(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"

    async def work() -> None:
        pass

    sim = Simulation(seed=1, trace=path, disk=seedbed.DiskConfig(read_error_probability=0.5))
    sim.client("c", work)
    sim.run()
    header = json.loads(path.read_text().splitlines()[0])
    assert header["disk"]["read_error_probability"] == 0.5
    assert "network" in header and "clock" in header


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "Scenario.name must be a non-empty string, got ''"),
        ({"setup": 3}, "Scenario.setup must be a function taking the Simulation, got 3"),
        (
            {"faults": "chaos"},
            'Scenario.faults must be None, a FaultProfile, "swarm" or seedbed.swarm',
        ),
        ({"duration": -1}, "Scenario.duration must be a number of seconds in (0, 1e+09], got -1"),
        ({"invariants": [1]}, "Scenario.invariants must be zero-argument callables"),
        ({"netwrk": None}, "unknown Scenario world option 'netwrk'"),
    ],
)
def test_bad_scenario_settings_are_refused_in_one_line(
    kwargs: dict[str, object], message: str
) -> None:
    settings: dict[str, object] = {"name": "s", "setup": _scenarios.echo_world, **kwargs}
    with pytest.raises(UsageError) as info:
        Scenario(**settings)  # type: ignore[arg-type]
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_usage_error_raised_while_the_world_runs_fails_that_seed_only() -> None:
    # A checker handed a malformed history raises a UsageError from a liveness
    # predicate: a sweep must record it against the seed, not stop.
    def malformed_history() -> bool:
        raise seedbed.UsageError("value 7 is written to key 'k' more than once")

    scenario = Scenario("checks", _scenarios.echo_world, duration=2.0, liveness=[malformed_history])
    result, error = scenario.execute(3)
    assert result is None and error is not None
    assert "UsageError: value 7 is written to key 'k' more than once" in str(error)
    with pytest.raises(seedbed.UsageError):  # before the world runs: the target's error
        Scenario("broken", lambda sim: sim.client("c", 42), duration=1.0).execute(3)


def _forgot_to_return() -> None:
    """An invariant whose author forgot `return True`."""


def test_an_invariant_returning_none_says_so_and_what_it_must_return() -> None:
    async def idle() -> None:
        await asyncio.sleep(1)

    def setup(sim: Simulation) -> None:
        sim.client("c1", idle)

    scenario = Scenario("forgetful", setup, duration=1.0, invariants=[_forgot_to_return])
    with pytest.raises(InvariantViolation) as info:
        scenario.run(seed=0)
    assert (
        "invariant _forgot_to_return broke: returned None, not True: an invariant must "
        "return True when it holds (or raise AssertionError with a message)"
    ) in info.value.message


def test_a_liveness_predicate_returning_a_count_says_what_it_returned() -> None:
    async def idle() -> None:
        await asyncio.sleep(1)

    def setup(sim: Simulation) -> None:
        sim.client("c1", idle)

    scenario = Scenario("count", setup, duration=1.0, liveness=[lambda: 0], liveness_timeout=1.0)
    with pytest.raises(LivenessFailure) as info:
        scenario.run(seed=0)
    assert "returned 0, not True: a liveness predicate must return True" in info.value.message
