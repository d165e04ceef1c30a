"""The `seedbed` command: exit codes, output shapes, bad input in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RACE = "examples.race:main"


def seedbed(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    environment.pop("SEEDBED_REEXEC", None)
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_run_prints_the_hash_and_exits_zero_on_success() -> None:
    done = seedbed("run", RACE, "--seed", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("seed=0 trace_hash=")
    assert "value=40" in done.stdout


def test_run_exits_one_on_a_failing_seed_and_prints_the_replay_command() -> None:
    done = seedbed("run", RACE, "--seed", "7")
    assert done.returncode == 1
    assert "AssertionError: balance went negative" in done.stderr
    assert "replay: seedbed run examples.race:main --seed 7" in done.stderr
    assert "view:   seedbed view examples.race:main --seed 7" in done.stderr


def test_hex_seeds_are_the_same_seeds() -> None:
    decimal = json.loads(seedbed("run", RACE, "--seed", "12648430", "--json").stdout)
    hexadecimal = json.loads(seedbed("run", RACE, "--seed", "0xC0FFEE", "--json").stdout)
    assert decimal == hexadecimal
    assert set(decimal) == {
        *("seed", "trace_hash", "steps", "virtual_time", "value", "failure", "result_digest"),
        "report",  # a failure's report (null: seed 12648430 passes)
    }


def test_a_recorded_run_replays_and_a_damaged_trace_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    assert seedbed("run", RACE, "--seed", "3", "--trace", str(trace)).returncode == 0
    done = seedbed("replay", RACE, "--trace", str(trace))
    assert done.returncode == 0 and "replay matched" in done.stdout
    trace.write_text(trace.read_text()[:-20])
    done = seedbed("replay", RACE, "--trace", str(trace))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "run.jsonl:" in done.stderr


def test_replaying_against_changed_code_reports_the_divergence(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    program = tmp_path / "race.py"  # one target, recorded, then edited in place
    source = (REPO / "examples" / "race.py").read_text()
    program.write_text(source)
    assert seedbed("run", f"{program}:main", "--seed", "3", "--trace", str(trace)).returncode == 0
    program.write_text(source.replace("uniform(0.001, 0.050)", "uniform(0.002, 0.050)"))
    done = seedbed("replay", f"{program}:main", "--trace", str(trace))
    assert done.returncode == 1
    assert "recorded:" in done.stderr and "actual:" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "examples.race:absent", "--seed", "1"), "has no 'absent'"),
        (("run", "no_such_module:main", "--seed", "1"), "cannot import 'no_such_module'"),
        (("run", "examples.race", "--seed", "1"), "module:function"),
        (("run", RACE, "--seed", "-4"), "negative"),
        (("run", RACE, "--seed", "lots"), "is not a seed"),
        (("replay", RACE, "--trace", "/nonexistent/trace.jsonl"), "cannot read"),
    ],
)
def test_bad_input_exits_two_with_a_one_line_message(args: tuple[str, ...], message: str) -> None:
    done = seedbed(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_reexecutes_itself_under_the_fixed_hash_seed(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\n\nasync def main():\n    return sys.flags.hash_randomization\n")
    done = seedbed("run", f"{probe}:main", "--seed", "1", PYTHONHASHSEED="123")
    assert done.returncode == 0, done.stderr
    assert "value=0" in done.stdout  # randomization off: the command runs under PYTHONHASHSEED=0


def test_runs_refuse_python_dash_o_which_would_strip_their_assertions() -> None:
    done = subprocess.run(
        [sys.executable, "-O", "-c", "import asyncio, seedbed\n"
         "async def main(): return 1\n"
         "seedbed.run(main, seed=1)"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "run without -O" in done.stderr
    cli = subprocess.run(
        [sys.executable, "-O", "-m", "seedbed", "run", RACE, "--seed", "1"],
        cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert cli.returncode == 2
    assert "without python -O" in cli.stderr
