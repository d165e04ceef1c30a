"""`seedbed explore` (issue 26): coverage of a run, branching, and the search.

The search must be a function of its seed and its run count (a CI job
repeats it), resume to the search it interrupted, and leave failures that
replay from the command it prints and shrink. Targets are the planted bugs
of `examples.rare`: one node, a few hundred steps a run.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import seedbed
from seedbed._core import choices
from seedbed._core.branching import BranchSession
from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.search._execute import execute
from seedbed._harness.search._plan import Candidate, Plan, follow_ups, make_plan
from seedbed._harness.search._store import interleaved, order_of
from seedbed._harness.shrink._file import read_choices
from seedbed._harness.shrink._trial import run_trial
from seedbed._harness.targets import resolve
from seedbed.cli import cli
from seedbed.errors import UsageError

LAG = "examples.rare:lag"
RETRIES = "examples.rare:retries"
SNAPSHOT = "examples.rare:snapshot"


def run_cli(*args: str) -> Result:
    """The `seedbed` command, in this process."""
    return CliRunner().invoke(cli, list(args))


def _lines(out: Path) -> list[dict[str, Any]]:
    """The log's lines with the folder's name taken out of file paths, and the
    wall-clock seconds out of its stop lines."""
    lines = []
    for row in (out / "explore.jsonl").read_text().splitlines():
        line = json.loads(row)
        line.pop("seconds", None)
        for key in ("entry", "failure_file", "replay"):
            if isinstance(line.get(key), str):
                line[key] = line[key].replace(str(out), "OUT")
        lines.append(line)
    return lines


def test_coverage_points_and_extremes_are_features_of_the_run() -> None:
    async def main() -> None:
        for lag in (1, 3, 2):
            seedbed.coverage("lag", lag.bit_length())
            seedbed.maximize("lag", lag)
            seedbed.minimize("lag", lag)
            await asyncio.sleep(0.1)
        seedbed.sometimes(True, "slept")

    result = execute(main, Plan(0, 5, "fresh"), None, {})
    assert result["features"] == ["coverage: lag=1", "coverage: lag=2", "sometimes: slept"]
    assert result["extremes"] == {"max lag": 3.0, "min lag": 1.0}


def test_coverage_outside_a_simulation_does_nothing() -> None:
    seedbed.coverage("anything", 3)
    seedbed.maximize("anything", 1.0)


def test_maximize_refuses_what_is_not_a_number() -> None:
    async def main() -> None:
        seedbed.maximize("lag", "high")  # type: ignore[arg-type]

    with pytest.raises(UsageError, match="needs a number, got 'high'"):
        seedbed.run(main, seed=1)


def test_a_branch_with_the_whole_prefix_is_the_recorded_run() -> None:
    obj = resolve(RETRIES)
    recorded = execute(obj, Plan(0, 11, "fresh"), None, {})
    source = [choices.Choice(s, r, v, i) for i, (s, r, v) in enumerate(recorded["choices"])]
    again = execute(obj, Plan(1, 99, "branch", 0, len(source)), source, {})
    assert again["choices"] == recorded["choices"]
    assert again["steps"] == recorded["steps"]


def test_a_branch_replays_its_prefix_then_draws_afresh() -> None:
    obj = resolve(RETRIES)
    recorded = execute(obj, Plan(0, 11, "fresh"), None, {})["choices"]
    source = [choices.Choice(s, r, v, i) for i, (s, r, v) in enumerate(recorded)]
    prefix = len(source) // 2
    branched = execute(obj, Plan(1, 99, "branch", 0, prefix), source, {})["choices"]
    assert branched[:prefix] == recorded[:prefix]
    assert branched[prefix:] != recorded[prefix:]


def _snapshot_reached() -> tuple[Any, dict[str, Any], float]:
    """A passing run of the snapshot bug that had a snapshot in progress, and when."""
    obj = resolve(SNAPSHOT)
    for seed in range(40):
        run = execute(obj, Plan(0, seed, "fresh"), None, {})
        when = run["times"].get("coverage: snapshot in progress=1")
        if run["status"] == "pass" and when is not None:
            return obj, run, when
    raise AssertionError("no run of 40 had a snapshot in progress")


def test_a_strike_puts_a_fault_where_the_run_reached_a_state_and_replays() -> None:
    obj, recorded, when = _snapshot_reached()
    source = [choices.Choice(s, r, v, i) for i, (s, r, v) in enumerate(recorded["choices"])]
    plan = Plan(1, 99, "strike", 0, len(source), redraw="nemesis", strike=when + 0.001)
    struck = execute(obj, plan, source, {})
    assert struck["status"] == "fail"  # crashed during the snapshot: the planted bug
    assert "a crash during a snapshot keeps the log" in struck["failure"]["message"]
    assert struck["times"]["coverage: snapshot in progress=1"] == when  # the same state
    # the struck run's own choices replay it exactly
    rows = struck["choices"]
    replayed = [choices.Choice(s, r, v, i) for i, (s, r, v) in enumerate(rows)]
    again = execute(obj, Plan(2, 7, "branch", 0, len(rows)), replayed, {})
    assert again["choices"] == rows and again["status"] == "fail"


def test_a_new_entry_is_followed_up_first() -> None:
    entry = Candidate([choices.Choice("nemesis", "nemesis: time to next fault", 1.0, 0)],
                      last_found=0, at=[3, 9], when=[0.5, 2.0])  # fmt: skip
    old = Candidate(entry.choices, last_found=0, at=[1], when=[0.1], followed=3)
    plans = [make_plan(0, index, [old, entry], 8) for index in range(8, 16)]
    assert [(p.kind, p.parent, p.follow) for p in plans[:2]] == [
        ("branch", 1, True),
        ("strike", 1, True),
    ]
    assert plans[0].prefix == 9  # where it got furthest
    assert plans[1].strike is not None and 2.0 < plans[1].strike <= 3.0
    assert all(not p.follow for p in plans[3:])
    assert follow_ups([old, replace(entry, followed=3)]) == []


def test_a_branch_session_draws_past_its_prefix_from_its_own_seed() -> None:
    async def main() -> list[bool]:
        loop = asyncio.get_running_loop()
        stream = loop.entropy.stream("test")  # type: ignore[attr-defined]
        return [stream.chance(0.5, f"coin {i}") for i in range(40)]

    source = [choices.Choice("test", f"coin {i}", 1, i) for i in range(40)]
    with choices.session() as plain:
        fresh = seedbed.run(main, seed=3).value
    made = BranchSession(source, prefix=10)
    previous = choices.entropy.choice_session
    choices.entropy.choice_session = made
    try:
        value = seedbed.run(main, seed=3).value
    finally:
        choices.entropy.choice_session = previous
    replayed = sum(1 for c in plain.choices[:10] if c.stream == "test")  # the loop draws too
    assert replayed >= 5
    assert value[:replayed] == [True] * replayed
    assert value[replayed:] == fresh[: 40 - replayed]  # the generator's first draws


def test_the_draw_order_survives_a_choice_file() -> None:
    chosen = [choices.Choice(s, "r", i, i) for i, s in enumerate("aabacbba")]
    shuffled = sorted(chosen, key=lambda c: c.stream)  # a file keeps streams apart
    back = interleaved(shuffled, order_of(chosen))
    assert [(c.stream, c.value) for c in back] == [(c.stream, c.value) for c in chosen]


def test_the_search_is_a_function_of_its_seed_and_runs(tmp_path: Path) -> None:
    first = explore(ExploreSpec(RETRIES, tmp_path / "a", seed=4, runs=20))
    second = explore(ExploreSpec(RETRIES, tmp_path / "b", seed=4, runs=20))
    other = explore(ExploreSpec(RETRIES, tmp_path / "c", seed=5, runs=20))
    lines = _lines(tmp_path / "a")
    assert lines == _lines(tmp_path / "b")
    assert lines != _lines(tmp_path / "c")
    assert first.state.runs == second.state.runs == other.state.runs == 20
    assert len(first.state.corpus) >= 1
    assert {line["plan"]["kind"] for line in lines[1:-1]} - {"fresh"}  # it branched


def test_a_resumed_search_is_the_search_it_interrupted(tmp_path: Path) -> None:
    explore(ExploreSpec(RETRIES, tmp_path / "whole", seed=2, runs=30))
    explore(ExploreSpec(RETRIES, tmp_path / "cut", seed=2, runs=13))
    log = tmp_path / "cut" / "explore.jsonl"
    log.write_text(log.read_text() + '{"kind": "run", "ind')  # killed mid-line
    resumed = explore(ExploreSpec(RETRIES, tmp_path / "cut", seed=2, runs=30, resume=True))
    assert resumed.resumed == 13 and resumed.ran == 17
    cut, whole = _lines(tmp_path / "cut"), _lines(tmp_path / "whole")
    stops = [line for line in cut if line["kind"] == "stop"]
    assert [(s["runs"], s["ran"], s["stopped"]) for s in stops] == [
        (13, 13, "13 runs done"),
        (30, 17, "30 runs done"),
    ]
    assert [line for line in cut if line["kind"] != "stop"] == whole[:-1]
    assert whole[-1] == stops[-1] | {"ran": 30}


def test_a_wall_clock_budget_records_the_runs_it_did(tmp_path: Path) -> None:
    search = explore(ExploreSpec(RETRIES, tmp_path, seed=2, budget=0.5))
    stop = _lines(tmp_path)[-1]
    assert stop["kind"] == "stop" and stop["budget"] == {"seconds": 0.5}
    assert stop["stopped"] == "budget of 0.5s spent"
    assert stop["runs"] == search.state.runs == len(_lines(tmp_path)) - 2 >= 1
    # the runs it did, given as --runs, repeat it exactly
    again = explore(ExploreSpec(RETRIES, tmp_path / "again", seed=2, runs=stop["runs"]))
    assert _lines(tmp_path / "again")[:-1] == _lines(tmp_path)[:-1]
    assert again.state.runs == stop["runs"]


def test_resuming_with_another_seed_is_refused(tmp_path: Path) -> None:
    explore(ExploreSpec(RETRIES, tmp_path, seed=2, runs=3))
    with pytest.raises(UsageError, match="seed 2, not 3"):
        explore(ExploreSpec(RETRIES, tmp_path, seed=3, runs=6, resume=True))
    with pytest.raises(UsageError, match="pass --resume"):
        explore(ExploreSpec(RETRIES, tmp_path, seed=2, runs=6))


def test_a_search_needs_one_budget(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--runs N or --budget"):
        ExploreSpec(RETRIES, tmp_path)


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A search of the lag bug run until it fails (found within 400 runs)."""
    out = tmp_path_factory.mktemp("explore")
    search = explore(ExploreSpec(LAG, out, seed=0, runs=400, stop_on_failure=True))
    assert search.state.buckets, "the lag bug was not found in 400 runs"
    lines = [json.loads(row) for row in (out / "explore.jsonl").read_text().splitlines()]
    failing = [line for line in lines if line.get("failure_file")]
    return out, failing[0]


def test_a_found_failure_replays_from_its_printed_command(
    found: tuple[Path, dict[str, Any]],
) -> None:
    _out, line = found
    assert line["replay"] == f"seedbed run {LAG} --choices {line['failure_file']}"
    done = run_cli("run", LAG, "--choices", line["failure_file"])
    assert done.exit_code == 1
    assert "a crashed leader's acknowledged entries survive" in done.stderr
    saved = read_choices(line["failure_file"], LAG)
    assert saved.failure is not None and saved.failure["bucket"] == line["bucket"]
    trial = run_trial(resolve(LAG), saved.seed, saved.choices, {})
    assert trial.bucket == line["bucket"] and trial.steps == line["steps"]


def test_a_found_failure_shrinks(found: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    _out, line = found
    shrunk = tmp_path / "shrunk.json"
    done = run_cli("shrink", LAG, "--choices", line["failure_file"], "--out", str(shrunk),
                   "--budget", "2")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert f"failure: {line['bucket']}" in done.stdout
    replayed = run_cli("run", LAG, "--choices", str(shrunk))
    assert replayed.exit_code == 1
    assert "a crashed leader's acknowledged entries survive" in replayed.stderr


def test_the_command_prints_coverage_and_failures(tmp_path: Path) -> None:
    done = run_cli("explore", RETRIES, "--runs", "12", "--out", str(tmp_path))
    assert done.exit_code in (0, 1), done.stderr
    assert "features reached:" in done.stdout
    assert "runs -> features:" in done.stdout
    assert "corpus:" in done.stdout
    bad = run_cli("explore", RETRIES, "--budget", "soon", "--out", str(tmp_path / "x"))
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        "error: --budget 'soon': give a duration above 0 like 90s, 10m or 1h"
    )
