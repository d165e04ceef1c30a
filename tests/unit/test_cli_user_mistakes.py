"""The command line never shows a traceback for the user's mistakes (issue 11, item 5).

Each case runs the real `seedbed` command on a program outside the current
directory and asserts one clear message, the documented exit status, and no
traceback.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
import sys

async def exits():
    sys.exit(3)

async def interrupts():
    raise KeyboardInterrupt

class Unprintable:
    def __repr__(self):
        raise RuntimeError("no repr")

async def unprintable():
    return Unprintable()

def not_async():
    return 1

async def fails():
    assert False, "balance went negative"
"""


def _seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "user_program.py"  # outside the current directory
    path.write_text(PROGRAM)
    return path


@pytest.mark.parametrize(
    ("command", "function", "status", "says"),
    [
        ("run", "exits", 1, "called sys.exit(3) inside the run"),
        ("run", "interrupts", 130, "interrupted"),
        ("sweep", "not_async", 2, "must be an async callable"),
        ("sweep", "exits", 1, "called sys.exit(<n>)"),  # a sweep's buckets mask numbers
    ],
)
def test_user_program_mistakes_are_one_line_with_a_status(
    program: Path, command: str, function: str, status: int, says: str
) -> None:
    args = ["--seed", "1"] if command == "run" else ["--seeds", "2"]
    done = _seedbed(command, f"{program}:{function}", *args)
    assert done.returncode == status, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert says in done.stderr
    if status == 2 or command == "run":  # a usage error, or one run: one line
        assert done.stderr.strip().count("\n") == 0, done.stderr


@pytest.mark.parametrize("as_json", [False, True])
def test_a_returned_value_whose_repr_raises_is_still_reported(program: Path, as_json: bool) -> None:
    done = _seedbed("run", f"{program}:unprintable", "--seed", "1", *(["--json"] * as_json))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Unprintable whose repr raised RuntimeError: no repr" in done.stdout


def test_a_target_module_that_exits_at_import_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "exiter.py"
    path.write_text("import sys\nsys.exit(4)\n\nasync def main():\n    pass\n")
    done = _seedbed("run", f"{path}:main", "--seed", "1")
    assert done.returncode == 2
    assert "called sys.exit(4)" in done.stderr and "Traceback" not in done.stderr


def test_replay_command_of_a_file_target_outside_cwd_names_the_file(program: Path) -> None:
    done = _seedbed("run", f"{program}:fails", "--seed", "1")
    assert done.returncode == 1
    assert f"replay: seedbed run {program}:fails --seed 1" in done.stderr
    assert "_seedbed_target_" not in done.stderr
    command = done.stderr.split("replay: ", 1)[1].splitlines()[0]
    again = _seedbed(*shlex.split(command)[1:])  # the printed command itself works
    assert again.returncode == 1 and "balance went negative" in again.stderr
