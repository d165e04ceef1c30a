"""`seedbed shrink` and `seedbed run --choices` (issue 14 item 5): a planted
bug's failing run shrinks, its choice file replays the same failure (also
after a change to the program), and a bad choice file is one line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.unit import _ledger

from seedbed._harness.explore import explore_options
from seedbed._harness.shrink._file import read_choices
from seedbed._harness.shrink._search import Shrinker
from seedbed._harness.shrink._trial import asyncio_log_off, run_trial
from seedbed._harness.targets import resolve
from seedbed.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
COUNTER = "examples.counter:counter"  # its planted bug fails at seed 11, after 3 faults
RACE = "examples.race:main"
LEDGER = "tests.unit._ledger:ledger"  # fails at seed 0 after 8 crashes


def seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ}
    environment.pop("SEEDBED_REEXEC", None)
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=environment, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def shrunk_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("shrink") / "counter.json"
    done = seedbed("shrink", COUNTER, "--seed", "11", "--out", str(out), "--budget", "30")
    assert done.returncode == 0, done.stderr[-2000:]
    return out, done.stdout


def test_a_planted_bug_shrinks_to_fewer_faults_and_steps(shrunk_file: tuple[Path, str]) -> None:
    _, printed = shrunk_file
    before_faults, after_faults, before_steps, after_steps = _shrunk_line(printed)
    assert after_faults < before_faults and after_faults <= 2
    assert after_steps < before_steps
    assert "faults and world events, by virtual time:" in printed and "crash server" in printed
    assert " -> " in printed.split("draws off their typical value ")[1]  # never "choices"
    assert "last 12 events before the failure:" in printed
    assert f"view it as a diagram: seedbed view {COUNTER} --choices " in printed


def test_the_shrunk_file_replays_the_same_failure(shrunk_file: tuple[Path, str]) -> None:
    out, _ = shrunk_file
    saved = json.loads(out.read_text())
    done = seedbed("run", COUNTER, "--choices", str(out))
    assert done.returncode == 1
    assert "invariant counted_at_most_once broke" in done.stderr
    assert saved["failure"]["error_type"] == "InvariantViolation"
    assert f"replay: seedbed run {COUNTER} --choices {out}" in done.stderr


def test_the_shrunk_choices_still_replay_after_a_change_to_the_program(
    shrunk_file: tuple[Path, str], tmp_path: Path
) -> None:
    saved = read_choices(shrunk_file[0], COUNTER)
    source = (REPO / "examples" / "counter.py").read_text()
    changed = tmp_path / "counter_changed.py"
    changed.write_text(source.replace("INCREMENTS = 20", "INCREMENTS = 30"))
    assert changed.read_text() != source
    trial = run_trial(resolve(f"{changed}:counter"), 11, saved.choices, {})
    assert saved.failure is not None and trial.bucket is not None
    # The same claim at the same line; the file is another (a copy), so the
    # identity's path differs: the shrinker only ever compares runs of one file.
    claim, _, line = saved.failure["bucket"].rpartition(":")
    assert trial.bucket.startswith(claim.split(" (at ")[0]) and trial.bucket.endswith(f":{line}")


def _shrunk_line(printed: str) -> tuple[int, int, int, int]:
    """(faults before, after, steps before, after) from `seedbed shrink`'s report."""
    line = next(text for text in printed.splitlines() if text.startswith("shrunk in"))
    faults = [int(n) for n in line.split("faults ")[1].split(",")[0].split(" -> ")]
    steps = [int(n) for n in line.split("steps ")[1].split(",")[0].split(" -> ")]
    return faults[0], faults[1], steps[0], steps[1]


def test_a_planted_bug_shrinks_to_one_fault_and_a_fifth_of_the_steps(tmp_path: Path) -> None:
    out = tmp_path / "ledger.json"
    done = seedbed("shrink", LEDGER, "--seed", "0", "--out", str(out), "--budget", "120")
    assert done.returncode == 0, done.stderr[-2000:]
    faults_before, faults_after, steps_before, steps_after = _shrunk_line(done.stdout)
    assert faults_before >= 5 and faults_after <= 2, done.stdout
    assert steps_after * 5 <= steps_before, done.stdout
    assert "crash writer" in done.stdout and "last 12 events before the failure:" in done.stdout
    replayed = seedbed("run", LEDGER, "--choices", str(out))
    assert replayed.returncode == 1, replayed.stderr[-2000:]
    assert "acknowledged records survive a crash" in replayed.stderr
    assert f"replay: seedbed run {LEDGER} --choices {out}" in replayed.stderr
    assert f"steps={steps_after} " in replayed.stdout + replayed.stderr


def test_a_shrink_keeps_the_problem_it_was_shown_not_another_of_the_same_claim() -> None:
    """Cut short, the audited ledger fails the same claim with another problem
    ("only 3 records written"): a shrink must keep "records lost"."""
    with asyncio_log_off():
        shrunk = Shrinker(_ledger.ledger_audited, 1, {}, budget=120).shrink()
    before, after = shrunk.original, shrunk.best
    assert after.failure is not None and before.failure is not None
    assert "records lost" in after.failure["message"], after.failure
    assert after.steps * 10 <= before.steps and after.fault_count <= 2, (before, after)
    again = run_trial(_ledger.ledger_audited, 1, after.chosen, {})
    assert again.signature == after.signature and again.steps == after.steps


def _bad_file(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "choices.json"
    path.write_text(text)
    return seedbed("run", COUNTER, "--choices", str(path))


GOOD = {"kind": "seedbed choices", "version": 1, "target": COUNTER, "seed": 11,
        "options": {}, "failure": None, "streams": {}}  # fmt: skip


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps([1, 2]), "is not a seedbed choice file"),
        (json.dumps({**GOOD, "version": 7}), "is version 7; this seedbed reads version 1"),
        (json.dumps({**GOOD, "target": RACE}), f"was recorded for target '{RACE}'"),
        (json.dumps({**GOOD, "seed": -1}), '"seed" must be a non-negative integer'),
        (
            json.dumps({**GOOD, "streams": {"loop": [["x"]]}}),
            "must be [reason, number|string|null]",
        ),
        (json.dumps({**GOOD, "options": {"rm": True}}), '"options" must be an object with keys'),
    ],
)
def test_a_bad_choice_file_is_refused_in_one_line(
    tmp_path: Path, document: str, message: str
) -> None:
    path = tmp_path / "choices.json"
    path.write_text(document)
    with pytest.raises(UsageError) as refused:
        read_choices(path, COUNTER)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_a_bad_choice_file_exits_two_with_no_traceback(tmp_path: Path) -> None:
    done = _bad_file(tmp_path, json.dumps({**GOOD, "version": 2}))
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "version 2" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_choice_file_and_a_passing_seed_are_usage_errors(tmp_path: Path) -> None:
    done = seedbed("run", COUNTER, "--choices", str(tmp_path / "absent.json"))
    assert done.returncode == 2 and "cannot read choices file" in done.stderr
    done = seedbed("shrink", RACE, "--seed", "0", "--out", str(tmp_path / "x.json"))
    assert done.returncode == 2 and "passes under seed 0: nothing to shrink" in done.stderr
    assert done.stderr.count("\n") == 1


def test_run_needs_a_seed_or_a_choice_file() -> None:
    done = seedbed("run", RACE)
    assert done.returncode == 2 and "--seed" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--strategy", "dfs"), "--strategy must be one of 'random', 'pct'"),
        (("--clock-resolution", "-1"), "--clock-resolution must be a number of seconds"),
        (("--pct-depth", "2"), "--pct-depth applies only with --strategy pct"),
        (("--strategy", "pct", "--pct-depth", "0"), "--pct-depth must be an int"),
    ],
)
def test_bad_exploration_flags_are_refused_in_one_line(
    flags: tuple[str, ...], message: str
) -> None:
    given = dict(zip(flags[::2], flags[1::2], strict=True))
    with pytest.raises(UsageError) as refused:
        explore_options(
            explore_tasks=None,
            clock_resolution=float(given["--clock-resolution"])
            if "--clock-resolution" in given
            else None,
            strategy=given.get("--strategy"),
            pct_depth=int(given["--pct-depth"]) if "--pct-depth" in given else None,
        )
    assert message in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_bad_exploration_flag_exits_two(command: str) -> None:
    args = [command, RACE, "--seed" if command == "run" else "--seeds", "1", "--strategy", "dfs"]
    done = seedbed(*args)
    assert done.returncode == 2, (command, done.stderr)
    assert "--strategy must be one of" in done.stderr and done.stderr.count("\n") == 1


def test_exploration_flags_reach_the_loop_and_the_replay_command() -> None:
    done = seedbed("run", RACE, "--seed", "7", "--no-explore-tasks", "--strategy", "pct",
                   "--pct-depth", "2", "--clock-resolution", "0.01")  # fmt: skip
    plain = seedbed("run", RACE, "--seed", "7")
    assert done.returncode in (0, 1), done.stderr
    ran, ran_plain = done.stdout + done.stderr, plain.stdout + plain.stderr
    assert ran.split(" steps=")[0] != ran_plain.split(" steps=")[0]  # another order
    flags = "--no-explore-tasks --clock-resolution 0.01 --strategy pct --pct-depth 2"
    assert flags in done.stderr or done.returncode == 0


def test_a_choice_file_with_a_stream_the_run_never_opens_is_refused_not_a_pass(
    shrunk_file: tuple[Path, str], tmp_path: Path
) -> None:
    """Issue 27 item 3: a damaged stream used to replay leniently, as a pass, exit 0."""
    saved = json.loads(shrunk_file[0].read_text())
    name = next(iter(saved["streams"]))
    saved["streams"][name + " damaged"] = saved["streams"].pop(name)
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(saved))
    done = seedbed("run", COUNTER, "--choices", str(damaged))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"never draws from stream '{name} damaged'" in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_choice_file_whose_header_was_edited_is_refused_by_its_digest(
    shrunk_file: tuple[Path, str], tmp_path: Path
) -> None:
    saved = json.loads(shrunk_file[0].read_text())
    assert len(saved["digest"]) == 16
    saved["seed"] += 1
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(saved))
    done = seedbed("run", COUNTER, "--choices", str(edited))
    assert done.returncode == 2 and "does not match its digest" in done.stderr
    other = seedbed("run", RACE, "--choices", str(shrunk_file[0]))
    assert other.returncode == 2 and f"recorded for target {COUNTER!r}" in other.stderr
