"""Quality: a sweep finds each of the kvstore's planted bugs, and the failure replays.

CI sweeps at most 40 seeds of each planted-bug scenario
(`scenarios:bug_<name>`), stopping at the first failure; `bench/bugs.py`
measures seeds-to-failure over many starting seeds. One failure is replayed
from its printed command in a fresh process, as a user would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from examples.kvstore import bugs, scenarios

SEEDS = 40  # per planted-bug scenario; forget_vote's fails in about 1 seed of 20
ROOT = Path(__file__).resolve().parents[2]


def _first_failure(bug: str) -> tuple[int, str]:
    scenario = scenarios.BUG_SCENARIOS[bug]
    for seed in range(SEEDS):
        _, error = scenario.execute(seed)
        if error is not None:
            return seed, str(error)
    raise AssertionError(f"{bug} not found in {SEEDS} seeds of {scenario.name}")


@pytest.mark.parametrize("bug", list(bugs.BUGS))
def test_a_sweep_finds_the_planted_bug(bug: str) -> None:
    seed, message = _first_failure(bug)
    assert f"seedbed run examples.kvstore.scenarios:bug_{bug} --seed {seed}" in message


def test_a_found_failure_replays_from_its_printed_command() -> None:
    seed, message = _first_failure("forget_vote")
    command = f"seedbed run examples.kvstore.scenarios:bug_forget_vote --seed {seed}"
    replay = subprocess.run(
        [sys.executable, "-m", "seedbed", *command.split()[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert replay.returncode == 1, replay.stderr[-2000:]
    first_line = message.splitlines()[0]
    assert first_line in replay.stdout + replay.stderr


def test_a_planted_bug_scenario_leaves_the_next_correct_run_correct() -> None:
    scenarios.bug_forget_vote.execute(0)
    assert bugs.planted("forget_vote")
    scenarios.happy_path.run(0)
    assert not any(bugs.planted(bug) for bug in bugs.BUGS)
