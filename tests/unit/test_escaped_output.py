"""A program's text reaches the terminal with its control characters escaped (issue 44, item 5).

Failure messages, assertion messages, node names and value reprs come from
the program under test: an escape sequence in them (`\\x1b]0;...\\x07` sets
the window title, `\\x1b[2J` clears the screen) or a right-to-left override
must show as text, on every command's output and in every report.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from seedbed._core.printable import terminal
from seedbed.cli import cli

HOSTILE = f"{Path(__file__).parent / '_explore_targets.py'}:hostile"
RAW = ("\x1b", "\x07", "\u202e")  # what must never reach a terminal as itself
SHOWN = r"boom \x1b[2J\x1b]0;pwned\x07\u202egnp.exe"  # the message, escaped


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _escaped(done: Result, shown: str = SHOWN) -> None:
    text = done.stdout + done.stderr
    assert not any(raw in text for raw in RAW), repr(text)
    assert shown in text, text


def test_the_escape_rules() -> None:
    assert terminal("a\x1b[2Jb\x07\r\x7f\x85\u202e\u2066\u2028") == (
        r"a\x1b[2Jb\x07\x0d\x7f\x85\u202e\u2066\u2028"
    )
    kept = "line one\n\tline two: é, 東京, 🙂, a‑b"  # newlines, tabs and letters stay
    assert terminal(kept) == kept


def test_run_escapes_the_failure_message() -> None:
    done = run_cli("run", HOSTILE, "--seed", "0")
    assert done.exit_code == 1
    _escaped(done, f"AssertionError: {SHOWN}")


def test_run_escapes_a_returned_value_whose_repr_carries_escapes(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(
        "class Loud:\n"
        "    def __repr__(self):\n"
        "        return 'Loud(\\x1b]0;pwned\\x07)'\n\n"
        "async def main():\n"
        "    return Loud()\n"
    )
    done = run_cli("run", f"{program}:main", "--seed", "0")
    assert done.exit_code == 0, done.output
    _escaped(done, r"value=Loud(\x1b]0;pwned\x07)")


def test_sweep_escapes_buckets_as_it_finds_and_sums_them(tmp_path: Path) -> None:
    done = run_cli("sweep", HOSTILE, "--seeds", "2", "--jobs", "1", "--out", str(tmp_path))
    assert done.exit_code == 1, done.output
    _escaped(done, r"boom \x1b[<n>J\x1b]<n>;pwned\x07\u202egnp.exe")
    assert "new failure, seed 0: AssertionError: boom \\x1b" in done.stderr


def test_explore_escapes_failures_and_features(tmp_path: Path) -> None:
    done = run_cli("explore", HOSTILE, "--runs", "3", "--out", str(tmp_path))
    assert done.exit_code == 1, done.output
    _escaped(done, r"boom \x1b[<n>J\x1b]<n>;pwned\x07\u202egnp.exe")


def test_shrink_escapes_the_failure_it_shrank(tmp_path: Path) -> None:
    done = run_cli("shrink", HOSTILE, "--seed", "0", "--out", str(tmp_path / "s.json"),
                   "--budget", "2")  # fmt: skip
    assert done.exit_code == 0, done.output
    _escaped(done, r"failure: AssertionError: boom \x1b[<n>J\x1b]<n>;pwned\x07\u202egnp.exe")


@pytest.mark.parametrize("tool", ["sweep", "explore"])
def test_reports_show_a_right_to_left_override_as_a_visible_mark(tmp_path: Path, tool: str) -> None:
    out = tmp_path / "out"
    budget = ("--seeds", "2", "--jobs", "1") if tool == "sweep" else ("--runs", "2")
    assert run_cli(tool, HOSTILE, *budget, "--out", str(out)).exit_code == 1
    page = tmp_path / "page.html"
    shown = run_cli("report", str(out), "--html", str(page))
    assert shown.exit_code == 0, shown.output
    html = page.read_text(encoding="utf-8")
    assert "\u202e" not in html and "&lt;U+202E&gt;gnp.exe" in html
