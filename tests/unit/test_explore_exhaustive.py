"""`seedbed explore TARGET --exhaustive --max-delays K` (issue 45, item 4)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.unit import _exhaustive_targets as targets

from seedbed._harness.search._exhaustive import Exhaustive, search
from seedbed._harness.search._schedules import Point, cost_of
from seedbed.cli import cli

MODULE = "tests.unit._exhaustive_targets"
EXAMPLE = "examples.order_numbers"


def explore(*args: str) -> Result:
    return CliRunner().invoke(cli, ["explore", *args])


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the explore folder and the failure database go here
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))


def test_finds_the_sleep_zero_race_within_two_delays_and_the_failure_replays() -> None:
    done = explore(f"{EXAMPLE}:race", "--exhaustive", "--max-delays", "2")
    assert done.exit_code == 1, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == (f"exhaustive search of {EXAMPLE}:race within 2 delays: schedule 2 fails "
                        "(1 delay from the default order)")  # fmt: skip
    assert lines[1].startswith("  AssertionError: two orders got one number: [")
    replay = lines[2].split("replay: ")[1].split()
    assert replay[-2:] == ["--choices", ".seedbed/explore/examples.order_numbers-race/"
                                        "failures/exhaustive-2.json"]  # fmt: skip
    again = CliRunner().invoke(cli, replay[replay.index("seedbed") + 1 :])
    assert again.exit_code == 1 and lines[1].strip() in again.output
    assert (Path(".seedbed/failures") / f"{EXAMPLE}-race").is_dir()  # saved, replayed first


def test_proves_the_locked_variant_within_two_delays() -> None:
    done = explore(f"{EXAMPLE}:locked", "--exhaustive", "--max-delays", "2")
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        f"exhaustive search of {EXAMPLE}:locked within 2 delays: the space is exhausted: "
        "18 schedules run, none fails (at most 3 schedule points in a run)\n"
    )
    assert explore(f"{EXAMPLE}:locked", "--exhaustive", "--max-delays", "2").stdout == done.stdout


@pytest.mark.parametrize("bound", [0, 1, 2, 3])
def test_each_schedule_within_the_bound_runs_once(bound: int, tmp_path: Path) -> None:
    targets.seen.clear()
    found = search(Exhaustive("three", bound, tmp_path), targets.three_in_a_batch)
    within = [order for order in itertools.permutations(range(3))
              if sum(a > b for a, b in itertools.combinations(order, 2)) <= bound]  # fmt: skip
    assert found.failure is None and found.runs == len(within) == len(targets.seen)
    assert sorted(targets.seen) == sorted(within)


def test_a_decision_costs_its_delays() -> None:
    assert cost_of(Point("loop", "r", True, 4, "0,1,2,3")) == 0
    assert cost_of(Point("loop", "r", True, 4, "3,2,1,0")) == 6
    assert cost_of(Point("loop", "r", False, 4, 2)) == 2
    orders = [value for value, _ in Point("loop", "r", True, 4, None).alternatives(2)]
    assert len(orders) == 3 + 5 and len(set(orders)) == 8  # 3 with one inversion, 5 with two


def test_a_program_that_draws_more_than_schedules_is_refused_in_one_line() -> None:
    done = explore(f"{MODULE}:dice", "--exhaustive", "--max-delays", "1")
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        f"error: explore --exhaustive enumerates schedules only, and {MODULE}:dice draws from "
        "the random module: its data is no schedule choice; search it without --exhaustive"
    ]
    world = explore("tests.unit._scenarios:stormy", "--exhaustive", "--max-delays", "1")
    assert world.exit_code == 2 and "also draws" in world.output and "stream" in world.output


def test_a_program_that_runs_differently_under_the_same_decisions_is_refused() -> None:
    done = explore(f"{MODULE}:leaky", "--exhaustive", "--max-delays", "1")
    assert done.exit_code == 2
    assert "ran differently under the same schedule decisions (at schedule point 0)" in done.output


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--exhaustive"], "needs a bound: --max-delays K"),
        (["--max-delays", "2"], "--max-delays goes with --exhaustive"),
        (["--exhaustive", "--max-delays", "2", "--runs", "5"], "drop --runs"),
        (["--exhaustive", "--max-delays", "2", "--jobs", "2"], "drop --jobs"),
        (["--exhaustive", "--max-delays", "2", "--strategy", "pct"], "drop --strategy"),
    ],
)
def test_conflicting_flags_are_refused(flags: list[str], says: str) -> None:
    done = explore(f"{EXAMPLE}:race", *flags)
    assert done.exit_code == 2 and says in done.output
    assert len(done.output.strip().splitlines()) == 1
    assert not os.path.exists(".seedbed/explore")
