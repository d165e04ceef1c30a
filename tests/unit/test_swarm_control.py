"""`seedbed.swarm(only=..., exclude=...)` and `--faults`: swarm over the faults a
system claims to survive, each class still drawn per seed from its own stream."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.unit import _scenarios

import seedbed
from seedbed import Scenario, UsageError
from seedbed._core import Entropy, Trace
from seedbed.faults import draw_swarm
from seedbed.faults._swarm import parse_faults

REPO = Path(__file__).resolve().parents[2]
NO_CHECKSUMS = ["disk_corruption", "misdirected_write"]


def _drawn(faults: seedbed.Swarm, seed: int) -> dict[str, object]:
    return faults.draw(Entropy(seed, Trace())).as_dict()


def test_an_excluded_class_is_never_drawn_and_the_others_keep_their_seeds_draws() -> None:
    faults = seedbed.swarm(exclude=NO_CHECKSUMS)
    for seed in range(300):
        plain = draw_swarm(Entropy(seed, Trace())).as_dict()
        drawn = _drawn(faults, seed)
        assert drawn["disk_corruption_per_second"] == drawn["misdirected_write_per_second"] == 0
        kept = {key: value for key, value in plain.items()
                if not key.startswith(("disk_corruption", "misdirected"))}  # fmt: skip
        assert {key: drawn[key] for key in kept} == kept  # per-class streams: unchanged


def test_only_draws_the_classes_it_names_and_still_varies_them_per_seed() -> None:
    faults = seedbed.swarm(only=["crash", "partition"])
    profiles = [_drawn(faults, seed) for seed in range(40)]
    for profile in profiles:
        on = {key for key, value in profile.items() if key.endswith("_per_second") and value}
        assert on <= {"crash_per_second", "partition_per_second"}
        assert profile["buggify"] is False  # buggify not named: never drawn
    assert len({(p["crash_per_second"], p["partition_per_second"]) for p in profiles}) > 20


def test_a_swarm_with_nothing_excluded_is_faults_swarm_seed_for_seed() -> None:
    plain = Scenario("s", _scenarios.echo_world, faults="swarm", duration=5.0)
    called = Scenario("s", _scenarios.echo_world, faults=seedbed.swarm(), duration=5.0)
    for seed in (0, 1):
        assert plain.run(seed).trace_hash == called.run(seed).trace_hash


def test_a_scenario_under_an_excluding_swarm_runs_without_those_faults() -> None:
    scenario = Scenario("s", _scenarios.echo_world, faults=seedbed.swarm(exclude=NO_CHECKSUMS),
                        duration=5.0)  # fmt: skip
    for seed in range(6):
        result, error = scenario.execute(seed, last_events=False)
        profile = result.profile if result is not None else error.report.profile  # type: ignore[union-attr]
        assert profile is not None and not profile["disk_corruption_per_second"]


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: seedbed.swarm(exclude=["disk_corupt"]), "unknown fault class 'disk_corupt'"),
        (lambda: seedbed.swarm(only=["crash"], exclude=["pause"]), "not both"),
        (lambda: seedbed.swarm(only=[]), "name at least one class"),
        (lambda: seedbed.swarm(exclude="crash"), "not a string"),  # type: ignore[arg-type]
        (lambda: parse_faults("swarm:drop=crash"), "only=A,B or exclude=A,B"),
        (lambda: parse_faults("chaos"), "--faults must be none, swarm"),
    ],
)
def test_a_bad_swarm_is_one_usage_error_naming_the_mistake(call: object, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        call()  # type: ignore[operator]


def test_specs_read_back_to_the_same_swarm() -> None:
    for spec in ("swarm", "swarm:only=crash,partition", "swarm:exclude=disk_corruption,buggify"):
        parsed = parse_faults(spec)
        assert parsed is not None and parsed.spec() == spec
    assert parse_faults("none") is None


def _seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "SEEDBED_REEXEC"}
    return subprocess.run([sys.executable, "-m", "seedbed", *args], cwd=REPO, env=environment,
                          capture_output=True, text=True, check=False)  # fmt: skip


def test_the_faults_flag_swaps_a_scenarios_faults_and_its_replay_line_keeps_it() -> None:
    target = "tests.unit._scenarios:flapping"  # no faults of its own; fails at t=3 s
    done = _seedbed("run", target, "--seed", "3", "--faults", "swarm:exclude=disk_corruption")
    assert done.returncode == 1
    assert "fault profile: no faults" not in done.stderr
    assert f"replay: seedbed run {target} --seed 3 --faults swarm:exclude=disk_corruption" in (
        done.stderr
    )
    bad = _seedbed("run", target, "--seed", "3", "--faults", "swarm:exclude=nope")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
