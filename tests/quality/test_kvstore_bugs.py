"""Quality: a sweep finds each of the kvstore's planted bugs, and the correct store passes.

CI sweeps a couple of dozen seeds of a shortened scenario per bug, stopping
at the first failure; `bench/bugs.py` measures the full scenarios over many
starting seeds. The failure must replay: the same seed fails the same way.
"""

from __future__ import annotations

import pytest
from examples.kvstore import bugs, scenarios

SEEDS = 24


def _first_failure(bug: str) -> tuple[int, str]:
    scenario = scenarios.BUG_SCENARIOS[bug]  # the module's own: the replay command names it
    for seed in range(SEEDS):
        _, error = scenario.execute(seed)
        if error is not None:
            _, again = scenario.execute(seed)
            assert again is not None and str(again) == str(error), "failure did not replay"
            return seed, str(error)
    raise AssertionError(f"{bug} not found in {SEEDS} seeds of {scenario.name}")


@pytest.mark.parametrize("bug", list(bugs.BUGS))
def test_a_sweep_finds_the_planted_bug_and_its_failure_replays(bug: str) -> None:
    seed, message = _first_failure(bug)
    assert f"seedbed run examples.kvstore.scenarios:bug_{bug} --seed {seed}" in message


def test_a_planted_bug_scenario_leaves_the_next_correct_run_correct() -> None:
    scenarios.bug_forget_vote.execute(0)
    assert bugs.planted("forget_vote")
    scenarios.happy_path.run(0)
    assert not any(bugs.planted(bug) for bug in bugs.BUGS)
