"""The smaller items of issue 27 (9): seeds as int() reads ASCII, no NaN budgets,
an empty history is not "linearizable", bidi controls cannot reverse the report."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from seedbed._harness.report import write_report
from seedbed.cli import cli


def invoke(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, list(args))
    return done.exit_code, done.output


@pytest.mark.parametrize(("typed", "seed"), [("007", 7), ("0x10", 16), ("1_000", 1000), ("42", 42)])
def test_seeds_are_what_int_reads_of_ascii_digits(typed: str, seed: int) -> None:
    code, output = invoke("replay", "examples.race:main", "--seed", typed, "--json")
    assert code in (0, 1), output
    assert f'"seed": {seed},' in output


@pytest.mark.parametrize("typed", ["٣", "７", "1.5", "seven"])
def test_other_digits_are_refused_with_the_allowed_form(typed: str) -> None:
    code, output = invoke("run", "examples.race:main", "--seed", typed)
    assert code == 2 and "ASCII digits like 42 or 007" in output


@pytest.mark.parametrize(
    "args",
    [
        ("sweep", "examples.race:main", "--seed-timeout", "nan"),
        ("sweep", "examples.race:main", "--seed-timeout", "inf"),
        ("shrink", "examples.race:main", "--seed", "1", "--budget", "nan"),
    ],
)
def test_nan_and_infinite_budgets_are_refused(args: tuple[str, ...]) -> None:
    code, output = invoke(*args)
    assert code == 2 and "finite number of seconds" in output


@pytest.mark.parametrize("model", ["register", "list-append"])
def test_an_empty_history_is_nothing_to_check_not_a_pass(tmp_path: Path, model: str) -> None:
    empty = tmp_path / "history.jsonl"
    empty.write_text("")
    code, output = invoke("check-history", str(empty), "--model", model)
    assert code == 2 and "nothing to check" in output
    assert "linearizable" not in output and "valid" not in output


def test_bidi_controls_from_a_run_are_shown_not_obeyed_in_the_report(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        '{"kind": "header", "version": 1, "target": "m:f", "options": {}}\n'
        '{"kind": "seed", "seed": 3, "status": "fail", "wall_time": 0.1, '
        '"error_type": "AssertionError", "message": "balance \\u202e0001\\u202c ok", '
        '"bucket": "AssertionError: balance \\u2067N\\u2069"}\n'
    )
    page = tmp_path / "page.html"
    write_report(results, page)
    html = page.read_text(encoding="utf-8")
    assert not any(chr(code) in html for code in (0x202E, 0x202C, 0x2067, 0x2069))
    assert "&lt;U+202E&gt;0001&lt;U+202C&gt;" in html


def test_a_target_needing_two_arguments_is_a_usage_error(tmp_path: Path) -> None:
    program = tmp_path / "two.py"
    program.write_text("async def two(a, b):\n    return a + b\n")
    for command in (("run", f"{program}:two", "--seed", "1"),
                    ("replay", f"{program}:two", "--seed", "1")):  # fmt: skip
        code, output = invoke(*command)
        assert code == 2 and "needs 2 arguments (a, b)" in output, output


def test_os_exit_inside_run_leaves_with_a_message(tmp_path: Path) -> None:
    import subprocess
    import sys

    program = tmp_path / "leave.py"
    program.write_text("import os\n\nasync def main():\n    os._exit(3)\n")
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "run", f"{program}:main", "--seed", "4"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 3
    assert "called os._exit(3) inside the run (seed=4)" in done.stderr
    assert f"replay: seedbed run {program}:main --seed 4" in done.stderr
