"""``seedbed check-history``: one line per file and an exit status to script on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedbed.cli._check import check_history

GOOD = (
    "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t1\n"
    "INFO  jepsen.util - 2\t:invoke\t:read\tnil\nINFO  jepsen.util - 2\t:ok\t:read\t1\n"
)
STALE = GOOD + "INFO  jepsen.util - 1\t:invoke\t:read\tnil\nINFO  jepsen.util - 1\t:ok\t:read\t2\n"
HARD = (
    "".join(f"INFO  jepsen.util - {p}\t:invoke\t:write\t{p}\n" for p in range(60))
    + "".join(f"INFO  jepsen.util - {p}\t:ok\t:write\t{p}\n" for p in range(60))
    + ("INFO  jepsen.util - 99\t:invoke\t:read\tnil\nINFO  jepsen.util - 99\t:ok\t:read\t-1\n")
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    texts = {"good": GOOD, "stale": STALE, "hard": HARD, "bad": GOOD + "garbage\n"}
    out = {}
    for name, text in texts.items():
        path = tmp_path / f"{name}.log"
        path.write_text(text)
        out[name] = str(path)
    return out


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(check_history, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout, result.stderr


def test_all_linearizable_exits_0(files: dict[str, str]) -> None:
    code, out, _ = run(files["good"], files["good"], "--model", "cas-register")
    assert code == 0
    assert out.splitlines() == [
        line for line in out.splitlines() if line.endswith(" s)") and ": linearizable (" in line
    ]
    assert len(out.splitlines()) == 2


def test_any_not_linearizable_exits_1(files: dict[str, str]) -> None:
    code, out, _ = run(files["good"], files["stale"], files["hard"], "--model", "cas-register",
                       "--timeout", "0.05")  # fmt: skip
    assert code == 1
    assert ": not-linearizable (" in out.splitlines()[1]


def test_unknown_without_failures_exits_3(files: dict[str, str]) -> None:
    code, out, _ = run(files["good"], files["hard"], "--model", "cas-register", "--timeout", "0.05")
    assert code == 3
    assert ": unknown (" in out.splitlines()[1]


def test_bad_input_exits_2_with_one_line_naming_file_and_line(files: dict[str, str]) -> None:
    code, out, err = run(files["bad"], files["good"], "--model", "cas-register")
    assert code == 2
    assert err == f"error: {files['bad']}:5: not a Jepsen log event line\n"
    assert "Traceback" not in out + err
    assert out.count("\n") == 1  # the good file is still reported


def test_model_that_does_not_fit_is_bad_input_at_the_first_odd_line(files: dict[str, str]) -> None:
    code, _, err = run(files["good"], "--model", "kv")
    assert code == 2
    assert err.startswith(f"error: {files['good']}:1: kv model")
    assert err.count("\n") == 1


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path / "nope.log"), "--model", "register")
    assert code == 2 and "nope.log" in err and err.count("\n") == 1


def test_json_lines_have_file_verdict_and_seconds(files: dict[str, str]) -> None:
    code, out, _ = run(files["good"], files["stale"], "--model", "cas-register", "--json")
    assert code == 1
    rows = [json.loads(line) for line in out.splitlines()]
    assert [set(row) for row in rows] == [{"file", "verdict", "seconds"}] * 2
    assert [row["verdict"] for row in rows] == ["linearizable", "not-linearizable"]
    assert [row["file"] for row in rows] == [files["good"], files["stale"]]
    assert all(isinstance(row["seconds"], float) and row["seconds"] >= 0 for row in rows)


def test_json_unknown_verdict(files: dict[str, str]) -> None:
    code, out, _ = run(files["hard"], "--model", "cas-register", "--json", "--timeout", "0.05")
    assert code == 3
    assert json.loads(out)["verdict"] == "unknown"


def test_model_is_required_and_checked() -> None:
    code, _, err = run("x.log")
    assert code == 2 and "--model" in err
    code, _, err = run("x.log", "--model", "stack")
    assert code == 2 and "stack" in err


def test_the_installed_command_runs_it(files: dict[str, str]) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "seedbed", "check-history", files["stale"], "--model", "register"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(files["stale"] + ": not-linearizable (")


def test_explain_names_the_conflicting_operations_by_line(files: dict[str, str]) -> None:
    code, out, _ = run(files["good"], files["stale"], "--model", "cas-register", "--explain")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].endswith(" s)") and ": linearizable (" in lines[0]  # nothing under a pass
    assert ": not-linearizable (" in lines[1]
    assert lines[2] == "    these operations cannot be ordered:"
    assert lines[3].strip() == "p1 read() -> 2   [lines 5-6]"  # nothing ever wrote 2
