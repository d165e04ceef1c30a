"""Failures stay found: `.seedbed/failures/`, replayed first by sweep, explore and
pytest until they pass, listed and cleared by `seedbed failures` (issue 45)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from seedbed._harness.failures._db import FailureDB
from seedbed.cli import cli
from seedbed.errors import UsageError

pytest_plugins = ["pytester"]

FAILS_ON = """
import asyncio

async def main():
    seed = asyncio.get_running_loop().run_context().seed
    await asyncio.sleep(1)
    assert seed not in BAD, f"seed {seed} is bad"
"""


def _program(folder: Path, bad: tuple[int, ...]) -> str:
    (folder / "prog.py").write_text(f"BAD = {bad!r}\n" + FAILS_ON)
    return "prog.py:main"


def seedbed(*args: str, cwd: Path) -> Result:
    """The command, in this process (its workers are processes of their own)."""
    os.chdir(cwd)  # each test's own folder: the database is in the working directory
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(autouse=True)
def _back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # restored after the test


def test_a_sweep_replays_seeds_7_and_19_saved_earlier_first_and_exits_1(tmp_path: Path) -> None:
    target = _program(tmp_path, (7, 19))
    found = seedbed("sweep", target, "--seeds", "20", "--jobs", "1", "--out", "a", cwd=tmp_path)
    assert found.exit_code == 1
    assert "saved 2 failures to .seedbed/failures/prog.py-main" in found.output
    again = seedbed("sweep", target, "--seeds", "5", "--jobs", "1", "--out", "b", cwd=tmp_path)
    assert again.exit_code == 1, again.output
    lines = again.stdout.splitlines()
    assert lines[0] == ("saved failures (.seedbed/failures/prog.py-main): 2 replayed first, "
                        "2 still fail, 0 pass now (dropped)")  # fmt: skip
    assert lines[1].startswith("  seed 7 still fails: AssertionError: seed <n> is bad")
    assert lines[3].startswith("  seed 19 still fails")
    assert "5 seeds, no failures" in lines[5]  # the fresh seeds, reported apart
    rows = [json.loads(line) for line in (tmp_path / "b/results.jsonl").open()]
    ran = [row["seed"] for row in rows if row["kind"] == "seed"]
    assert sorted(ran) == [0, 1, 2, 3, 4]  # the saved ones are not the sweep's seeds
    _program(tmp_path, (7,))  # seed 19 fixed: dropped; seed 7 stays
    fixed = seedbed("sweep", target, "--seeds", "2", "--jobs", "1", "--out", "c", "--json",
                    cwd=tmp_path)  # fmt: skip
    assert fixed.exit_code == 1
    assert json.loads(fixed.stdout)["saved"]["still_failing"] == [7]
    assert json.loads(fixed.stdout)["saved"]["dropped"] == [19]
    assert [e.seed for e in FailureDB(target, tmp_path / ".seedbed/failures").entries()] == [7]
    _program(tmp_path, ())
    done = seedbed("sweep", target, "--seeds", "2", "--jobs", "1", "--out", "d", cwd=tmp_path)
    assert done.exit_code == 0 and "1 replayed first, 0 still fail, 1 passes now" in done.output
    assert FailureDB(target, tmp_path / ".seedbed/failures").entries() == []


def test_a_failure_saved_under_other_run_options_is_kept_but_not_replayed(tmp_path: Path) -> None:
    target = _program(tmp_path, (1,))
    seedbed("sweep", target, "--seeds", "2", "--jobs", "1", "--out", "a", "--max-time", "50",
            cwd=tmp_path)  # fmt: skip
    other = seedbed("sweep", target, "--seeds", "1", "--jobs", "1", "--out", "b", cwd=tmp_path)
    assert other.exit_code == 0
    assert "under other run options, not replayed: 1" in other.output
    off = seedbed("sweep", target, "--seeds", "2", "--jobs", "1", "--out", "c", "--no-saved",
                  cwd=tmp_path)  # fmt: skip
    assert off.exit_code == 1 and "saved" not in off.output


def test_seedbed_failures_lists_and_clears_and_refuses_bad_input_in_one_line(
    tmp_path: Path,
) -> None:
    target = _program(tmp_path, (0,))
    seedbed("sweep", target, "--seeds", "1", "--jobs", "1", cwd=tmp_path)
    listed = seedbed("failures", target, cwd=tmp_path)
    assert listed.exit_code == 0
    assert "seed 0, found by sweep: AssertionError: seed <n> is bad" in listed.output
    assert "replay: " in listed.output and "run prog.py:main --seed 0" in listed.output
    assert "prog.py-main: 1" in seedbed("failures", cwd=tmp_path).output
    for bad in (["--clear"], ["--all"], [target, "--clear", "--all"]):
        refused = seedbed("failures", *bad, cwd=tmp_path)
        assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    folder = tmp_path / ".seedbed/failures/prog.py-main"
    (folder / "seed-3.json").write_text('{"kind": "seedbed failure", "version": 1')
    damaged = seedbed("failures", target, cwd=tmp_path)
    assert damaged.exit_code == 2
    assert damaged.output.strip().splitlines() == [damaged.output.strip()]
    assert "seed-3.json: not valid JSON" in damaged.output and "--clear" in damaged.output
    swept = seedbed("sweep", target, "--seeds", "1", "--jobs", "1", "--out", "x", cwd=tmp_path)
    assert swept.exit_code == 2 and not (tmp_path / "x/results.jsonl").exists()
    cleared = seedbed("failures", target, "--clear", cwd=tmp_path)
    assert cleared.output.strip() == "cleared 2 saved failures of prog.py:main"
    assert "no saved failures" in seedbed("failures", cwd=tmp_path).output


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_an_entry_that_is_not_a_regular_file_is_refused_not_followed(
    tmp_path: Path, kind: str
) -> None:
    db = FailureDB("m:f", tmp_path)
    db.save_seed(1, {}, "sweep", None, "seedbed run m:f --seed 1")
    path = db.folder / "seed-2.json"
    if kind == "symlink":
        path.symlink_to(db.folder / "seed-1.json")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(UsageError, match=r"seed-2.json is not a regular file; remove it"):
        db.entries()
    with pytest.raises(OSError):
        db.save_seed(2, {}, "sweep", None, "x")  # never written through, nor renamed over


WRITER = """
import sys
from pathlib import Path
from seedbed._harness.failures._db import FailureDB
db = FailureDB("m:f", Path(sys.argv[1]))
for round in range(15):
    for seed in range(5):
        db.save_seed(seed, {}, "sweep", {"message": "x" * 3000}, f"replay {seed}")
    for entry in db.entries():
        if entry.seed == 4:
            db.drop(entry)
"""


def test_concurrent_writers_never_leave_a_damaged_or_partial_entry(tmp_path: Path) -> None:
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)]) for _ in range(3)]
    db = FailureDB("m:f", tmp_path)
    while any(writer.poll() is None for writer in writers):
        assert {entry.seed for entry in db.entries()} <= {0, 1, 2, 3, 4}  # each whole
    assert [writer.returncode for writer in writers] == [0, 0, 0]
    assert [entry.seed for entry in db.entries()][:4] == [0, 1, 2, 3]
    assert not [name for name in os.listdir(db.folder) if name.startswith(".")]


RANDOM_FAILURE = """
import asyncio, random

async def main():
    await asyncio.sleep(1)
    assert random.random() > 0.15, "unlucky"
"""


def test_explore_saves_its_failure_as_a_choice_file_that_a_sweep_replays_first(
    tmp_path: Path,
) -> None:
    (tmp_path / "prog.py").write_text(RANDOM_FAILURE)
    found = seedbed("explore", "prog.py:main", "--runs", "30", cwd=tmp_path)
    assert found.exit_code == 1 and "saved 1 failure to" in found.output
    entry = FailureDB("prog.py:main", tmp_path / ".seedbed/failures").entries()[0]
    assert entry.choices and entry.found_by == "explore"
    assert entry.replay.endswith(f"run prog.py:main --choices {entry.path.relative_to(tmp_path)}")
    words = entry.replay.split()  # however seedbed was started: ... run TARGET --choices FILE
    replayed = seedbed(*words[words.index("seedbed") + 1 :], cwd=tmp_path)
    assert replayed.exit_code == 1 and "AssertionError: unlucky" in replayed.output
    swept = seedbed("sweep", "prog.py:main", "--seeds", "1", "--first", "4", "--jobs", "1",
                    cwd=tmp_path)  # fmt: skip
    assert swept.exit_code == 1
    assert f"({entry.name}) still fails: AssertionError: unlucky" in swept.output
    again = seedbed("explore", "prog.py:main", "--runs", "1", "--out", "e2", cwd=tmp_path)
    assert again.exit_code == 1 and "1 replayed first, 1 still fails" in again.output


PYTEST_FAILING = """
import pytest

BAD = {bad}

@pytest.mark.seedbed(seeds=3)
def test_seeds(seed):
    assert seed % 7 not in BAD, f"seed {{seed}} is bad"
"""


def test_pytest_saves_a_failing_seed_and_replays_it_first_until_it_passes(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_db=PYTEST_FAILING.format(bad="set(range(7))"))
    first = pytester.runpytest_inprocess("-v", "-p", "no:cacheprovider")
    first.assert_outcomes(failed=3)
    saved = FailureDB("test_db.py::test_seeds", pytester.path / ".seedbed/failures").entries()
    assert [entry.found_by for entry in saved] == ["pytest"] * 3
    assert f"DST_SEED={saved[0].seed} " in saved[0].replay
    assert f"test_db.py::test_seeds[seed={saved[0].seed}]" in saved[0].replay
    pytester.makepyfile(test_db=PYTEST_FAILING.format(bad="set()"))
    more = pytester.runpytest_inprocess("-v", "--seedbed-seeds=5", "-p", "no:cacheprovider")
    more.assert_outcomes(passed=5)  # 3 saved, first, and the 2 seeds they do not cover
    text = more.stdout.str()
    assert "seedbed: saved failures, replayed first" in text
    assert text.count(": passes now (dropped)") == 3
    ran = [line.split("[")[1].split("]")[0] for line in text.splitlines() if " PASSED" in line]
    assert sorted(ran[:3]) == sorted(f"seed={entry.seed}" for entry in saved)
    assert FailureDB("test_db.py::test_seeds", pytester.path / ".seedbed/failures").entries() == []
