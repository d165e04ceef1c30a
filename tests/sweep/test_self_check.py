"""Every sweep checks itself (issue 41 item 4): a share of its seeds runs a
second time in the worker that ran it, after other seeds, and a difference
fails the sweep naming the seed, where the runs part and the replay command.
`explore` and the pytest plugin do the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.sweep._cli import records, seedbed

from seedbed._harness.sweeps._recheck import chosen_seeds

LEAKY, CLEAN = "tests.sweep._leaky:leaky", "tests.sweep._leaky:clean"
pytest_plugins = ["pytester"]


def test_one_seed_in_twenty_is_chosen_by_its_number_and_always_at_least_one() -> None:
    chosen = chosen_seeds(range(1000), 20)
    assert 30 <= len(chosen) <= 70 and chosen == chosen_seeds(range(1000), 20)
    assert chosen_seeds(range(500, 1000), 20) == {s for s in chosen if s >= 500}  # resumable
    assert len(chosen_seeds(range(7, 8), 20)) == 1  # a one-seed sweep still checks itself
    assert chosen_seeds(range(1000), 0) == frozenset()


def test_a_default_sweep_of_a_target_that_remembers_earlier_seeds_fails_naming_it(
    tmp_path: Path,
) -> None:
    done = seedbed("sweep", LEAKY, "--seeds", "12", "--jobs", "1", "--out", str(tmp_path),
                   "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["rechecked"] >= 1 and summary["recheck_differed"]
    seed = summary["recheck_differed"][0]
    assert seed in summary["failing_seeds"]
    said = done.stderr
    assert f"ran differently (seed {seed})" in said and "nondeterminism" in said
    assert "Nondeterminism: a seed ran differently when its worker ran it again" in said
    assert "state leaking between seeds" in said and "returned" in said  # where they part
    assert f"seedbed run {LEAKY} --seed {seed}" in said
    record = next(r for r in records(tmp_path / "results.jsonl")[::-1] if r.get("seed") == seed
                  and r["kind"] == "seed")  # fmt: skip
    assert record["status"] == "fail" and record["error_type"] == "Nondeterminism"


def test_a_deterministic_target_passes_its_recheck_and_the_summary_counts_it(
    tmp_path: Path,
) -> None:
    done = seedbed("sweep", CLEAN, "--seeds", "12", "--jobs", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "rechecked 1 of 12 seeds" in done.stdout and "each the same" in done.stdout


def test_recheck_0_turns_it_off(tmp_path: Path) -> None:
    done = seedbed("sweep", LEAKY, "--seeds", "12", "--jobs", "1", "--recheck", "0",
                   "--out", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "recheck: off" in done.stdout
    assert not [r for r in records(tmp_path / "results.jsonl") if r["kind"] == "recheck"]


def test_explore_rechecks_its_runs_in_one_process_and_fails_on_a_difference(
    tmp_path: Path,
) -> None:
    done = seedbed("explore", LEAKY, "--runs", "8", "--out", str(tmp_path / "a"))
    assert done.returncode == 1, done.stderr
    assert "ran differently: nondeterminism" in done.stdout
    assert "result_digest" in done.stdout and "replay:" in done.stdout
    fine = seedbed("explore", CLEAN, "--runs", "8", "--out", str(tmp_path / "b"))
    assert fine.returncode == 0 and "each the same" in fine.stdout, fine.stderr


LEAKY_TESTS = """
import asyncio
import pytest

RUNS = []

@pytest.mark.seedbed(seeds=3)
async def test_remembers(seed):
    RUNS.append(seed)
    await asyncio.sleep(0.01 * len(RUNS))  # how long it waits: what ran before it

@pytest.mark.seedbed(seeds=3)
async def test_forgets(seed):
    await asyncio.sleep(0.01)
"""


def test_the_pytest_plugin_runs_a_tests_first_seed_twice_and_fails_on_a_difference(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rf")
    outcomes = result.parseoutcomes()  # test_remembers's first seed, and any 1 in 20
    assert outcomes["failed"] >= 1 and outcomes["passed"] + outcomes["failed"] == 6
    assert "FAILED test_leaky.py::test_forgets" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*Nondeterminism: seed * ran differently when run again*"])
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--seedbed-recheck=0")
    off.assert_outcomes(passed=6)


def test_a_rerun_that_kills_its_worker_fails_the_sweep_as_nondeterminism(tmp_path: Path) -> None:
    target = "tests.sweep._leaky:dies_second_time"
    done = seedbed("sweep", target, "--seeds", "1", "--out", str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "ran differently (seed 0)" in done.stdout and "'crash'" in done.stdout
    assert "1 seeds: 0 passed, 1 failed" in done.stdout  # counted once, not twice
