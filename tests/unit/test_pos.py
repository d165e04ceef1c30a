"""`strategy="pos"`: partial-order sampling, nothing to tune (issue 45, item 3)."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner
from examples import order_numbers
from tests.quality import planted
from tests.quality.planted import _defaults

import seedbed
from seedbed import LoopConfig, UsageError
from seedbed._core import choices
from seedbed.cli import cli


def _fails(main: object, seed: int) -> bool:
    try:
        seedbed.run(main, seed=seed, strategy="pos")  # type: ignore[arg-type]
    except AssertionError:
        return True
    return False


def test_pos_finds_the_sleep_zero_race_and_never_fails_its_locked_variant() -> None:
    first = next(seed for seed in range(20) if _fails(order_numbers.race, seed))
    assert first < 5
    assert not any(_fails(order_numbers.locked, seed) for seed in range(100))


@pytest.mark.parametrize("name", sorted(planted.SYSTEMS))
def test_pos_finds_each_planted_bug_within_20_runs_and_passes_its_fix(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_defaults, "OVERRIDE", {"strategy": "pos"})
    _, run = planted.SYSTEMS[name]
    assert any(run(seed, True) is not None for seed in range(20))
    assert not [seed for seed in range(20) if run(seed, False) is not None]


def test_a_lane_that_ran_draws_a_new_priority_and_a_seed_replays() -> None:
    def world(seed: int) -> str:
        sim = seedbed.Simulation(seed=seed, strategy="pos")

        def counter(name: str) -> object:
            async def main() -> None:
                for _ in range(5):
                    await asyncio.sleep(0.01)

            return main

        for name in ("a", "b", "c"):
            sim.client(name, counter(name))
        return sim.run(max_time=5).trace_hash

    with choices.session() as made:
        first = world(4)
    reasons = [choice.reason for choice in made.choices if choice.stream == "pos"]
    assert reasons and set(reasons) == {"pos: priority of an event"}
    assert world(4) == first and world(5) != first


def test_pos_takes_no_pct_settings_and_the_flag_is_checked() -> None:
    assert LoopConfig(strategy="pos").strategy == "pos"
    with pytest.raises(UsageError, match='apply only with strategy="pct"'):
        LoopConfig(strategy="pos", pct_depth=2)
    done = CliRunner().invoke(cli, ["run", "examples.order_numbers:race", "--seed", "0",
                                    "--strategy", "pos", "--pct-depth", "2"])  # fmt: skip
    assert done.exit_code == 2 and "--pct-depth applies only with --strategy pct" in done.output
    wrong = CliRunner().invoke(cli, ["run", "examples.order_numbers:race", "--seed", "0",
                                     "--strategy", "poss"])  # fmt: skip
    assert wrong.exit_code == 2 and "pos" in wrong.output
