"""`seedbed run/replay` with scenarios and plain Simulation functions, and
`run_target`, the one function every command runs a seed through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.unit import _scenarios

from seedbed import BudgetExceeded, InvariantViolation, UsageError
from seedbed._core.tracefile import read_trace
from seedbed._harness.targets import resolve, run_target

REPO = Path(__file__).resolve().parents[2]
FILE = "tests/unit/_scenarios.py"


def seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ}
    environment.pop("SEEDBED_REEXEC", None)
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_run_target_runs_a_scenario_and_reports_its_profile_and_faults() -> None:
    outcome = run_target(_scenarios.stormy, 4)
    assert outcome.kind == "scenario" and outcome.status == "pass"
    assert outcome.profile is not None and outcome.profile["crash_per_second"] == 0.5
    assert set(outcome.faults or {}) == {"crash", "partition", "link_stall"}  # + the network's
    record = outcome.record()
    json.dumps(record)
    assert record["replay"] == "seedbed run tests.unit._scenarios:stormy --seed 4"


def test_run_target_runs_a_plain_function_that_builds_a_simulation() -> None:
    outcome = run_target(_scenarios.plain_simulation, 5)
    assert outcome.kind == "simulation" and outcome.value.values == {"worker": 10}
    failed = run_target(_scenarios.plain_simulation, 3)
    assert isinstance(failed.error, AssertionError)
    assert "replay: seedbed run tests.unit._scenarios:plain_simulation --seed 3" in str(
        failed.error.__notes__
    )


def test_a_plain_simulation_function_can_be_traced_and_keeping_its_events_changes_no_hash(
    tmp_path: Path,
) -> None:
    """What check-determinism needs to name a divergent function's first
    differing event (issue 23.3): its own Simulation's events, recorded."""
    path = tmp_path / "run.jsonl"
    traced = run_target(_scenarios.plain_simulation, 5, trace=str(path))
    plain = run_target(_scenarios.plain_simulation, 5)
    assert traced.error is None and traced.trace_hash == plain.trace_hash
    recorded = read_trace(path)
    assert recorded.seed == 5 and recorded.end["hash"] == traced.trace_hash
    assert len(recorded.events) == recorded.end["end"] > 0


def test_an_async_main_that_runs_a_simulation_inside_is_refused_with_advice() -> None:
    with pytest.raises(UsageError, match=r"wrap the world's setup in a seedbed\.Scenario"):
        run_target(_scenarios.nests_a_simulation, 0)


def test_a_plain_program_gets_a_default_budget_so_serving_forever_ends() -> None:
    outcome = run_target(_scenarios.serves_forever, 0)
    assert isinstance(outcome.error, BudgetExceeded)
    assert "max_time=3600.0s" in str(outcome.error)
    assert "replay: seedbed run tests.unit._scenarios:serves_forever --seed 0" in str(outcome.error)


def test_run_target_returns_a_scenario_failure_with_its_location() -> None:
    outcome = run_target(_scenarios.flapping, 0)
    assert isinstance(outcome.error, InvariantViolation)
    line = _scenarios.value_not_negative.__code__.co_firstlineno + 1  # the assert in it
    assert outcome.record()["location"] == f"{FILE}:{line}"
    assert outcome.record()["error_type"] == "InvariantViolation"


def test_a_scenario_resolves_by_name_and_keeps_that_name_for_replays() -> None:
    scenario = resolve(f"{FILE}:flapping")
    outcome = run_target(scenario, 0)
    assert outcome.replay == f"seedbed run {FILE}:flapping --seed 0"


def test_the_command_runs_a_scenario_and_prints_what_the_nemesis_did() -> None:
    done = seedbed("run", "tests.unit._scenarios:stormy", "--seed", "4")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("seed=4 trace_hash=")
    assert "faults: partition 1 (" in done.stdout and "effective)" in done.stdout
    assert "none of: crash" in done.stdout  # on in the profile, injected nothing


def test_the_command_prints_a_failing_scenarios_report_and_exits_one() -> None:
    done = seedbed("run", "tests.unit._scenarios:flapping", "--seed", "0")
    assert done.returncode == 1
    assert "InvariantViolation: invariant value_not_negative broke" in done.stderr
    assert "  fault profile: no faults" in done.stderr
    assert "  replay: seedbed run tests.unit._scenarios:flapping --seed 0" in done.stderr


def test_replay_by_seed_repeats_the_run() -> None:
    ran = seedbed("run", "tests.unit._scenarios:swarm", "--seed", "2", "--json")
    replayed = seedbed("replay", "tests.unit._scenarios:swarm", "--seed", "2", "--json")
    assert ran.returncode == replayed.returncode
    assert json.loads(ran.stdout) == json.loads(replayed.stdout)
    assert json.loads(ran.stdout)["kind"] == "scenario"


def test_a_recorded_scenario_replays_against_its_trace(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    ran = seedbed("run", "tests.unit._scenarios:stormy", "--seed", "1", "--trace", str(trace))
    assert ran.returncode == 0, ran.stderr
    done = seedbed("replay", "tests.unit._scenarios:stormy", "--trace", str(trace))
    assert done.returncode == 0, done.stderr
    assert "replay matched: seed=1" in done.stdout
    # Another target's trace is a usage error naming both, never Nondeterminism (issue 27).
    done = seedbed("replay", "tests.unit._scenarios:swarm", "--trace", str(trace))
    assert done.returncode == 2, done.stderr
    assert "Nondeterminism" not in done.stderr
    assert "tests.unit._scenarios:stormy" in done.stderr
    assert "tests.unit._scenarios:swarm" in done.stderr


def test_the_command_runs_a_plain_simulation_function() -> None:
    done = seedbed("run", "tests.unit._scenarios:plain_simulation", "--seed", "5")
    assert done.returncode == 0, done.stderr
    assert "values={'worker': 10}" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("replay", "tests.unit._scenarios:calm"), "exactly one of --trace FILE or --seed N"),
        (("run", "tests.unit._scenarios:nests_a_simulation", "--seed", "0"), "wrap the world"),
        (("run", "tests.unit._scenarios:state", "--seed", "0"), "neither a function nor"),
        (("run", "tests.unit._scenarios:plain_simulation", "--seed", "0", "--max-steps", "9"),
         "sets its own budgets"),
    ],
)  # fmt: skip
def test_bad_scenario_commands_exit_two_with_one_line(args: tuple[str, ...], message: str) -> None:
    done = seedbed(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and done.stderr.count("\n") == 1
