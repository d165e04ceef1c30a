"""Every file seedbed writes is checked as `report --html` is (issue 44, item 4).

`run --trace`, `shrink --out` and the choice files refuse a symlink, a FIFO
or a device at their path (before anything runs), write through a temporary
file beside it, and a disk that cannot take the file is the machine's
failure (exit 2, the path and what to do), never the program's (exit 1),
whatever kind of target ran.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from seedbed._core import files
from seedbed.cli import cli

REPO = Path(__file__).resolve().parents[2]
RACE = "examples.race:main"  # an async main
LAG = "examples.rare:lag"  # a Scenario
TARGETS = [RACE, LAG]


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _refused(done: Result, *says: str) -> None:
    assert done.exit_code == 2, done.output
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    for text in says:
        assert text in done.stderr, done.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_run_trace_onto_a_symlink_is_refused_and_leaves_its_target_alone(
    tmp_path: Path, target: str
) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_text("mine")
    link = tmp_path / "run.trace"
    link.symlink_to(kept)
    done = run_cli("run", target, "--seed", "0", "--trace", str(link))
    _refused(done, f"{link} is a symlink", "--trace a path to a new or regular file")
    assert link.is_symlink() and kept.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt", "run.trace"]


def test_run_trace_onto_a_device_is_refused() -> None:
    _refused(run_cli("run", RACE, "--seed", "0", "--trace", "/dev/null"), "a character device")


def test_run_trace_onto_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    env = {**os.environ}
    env.pop("SEEDBED_REEXEC", None)
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "run", LAG, "--seed", "0", "--trace", str(fifo)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a hang fails here
        check=False,
    )
    assert done.returncode == 2 and f"{fifo} is a FIFO" in done.stderr, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("target", TARGETS)
def test_a_trace_replaces_an_old_one_whole_through_a_temporary_file(
    tmp_path: Path, target: str
) -> None:
    trace = tmp_path / "run.trace"
    trace.write_text("an old trace\n")
    done = run_cli("run", target, "--seed", "0", "--trace", str(trace))
    assert done.exit_code in (0, 1), done.output
    assert trace.read_text().startswith('{"') and '"end"' in trace.read_text().splitlines()[-1]
    assert [p.name for p in tmp_path.iterdir()] == ["run.trace"]  # no temporary left


class _Full:
    """A file whose writes fail with ENOSPC after `room` of them."""

    def __init__(self, real: Any, room: int) -> None:
        self._real, self._room = real, room

    def write(self, text: Any) -> int:
        if self._room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= 1
        return int(self._real.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.mark.parametrize("target", TARGETS)
def test_a_full_disk_during_run_trace_is_exit_2_with_the_path_for_every_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    trace = tmp_path / "run.trace"
    trace.write_text("an old trace\n")
    real_fdopen = os.fdopen
    monkeypatch.setattr(files.os, "fdopen",
                        lambda fd, mode, **kw: _Full(real_fdopen(fd, mode, **kw), 5))  # fmt: skip
    done = run_cli("run", target, "--seed", "0", "--trace", str(trace))
    _refused(done, f"cannot write the trace {trace}: No space left on device", "make room")
    assert "UncaughtError" not in done.output  # the machine's failure, not the program's
    assert trace.read_text() == "an old trace\n"  # left as it was
    assert [p.name for p in tmp_path.iterdir()] == ["run.trace"]


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_shrink_out_is_refused_before_any_shrinking(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "shrunk.json"
    if kind == "symlink":
        out.symlink_to(tmp_path / "elsewhere.json")
    else:
        os.mkfifo(out)
    done = run_cli("shrink", RACE, "--seed", "3", "--out", str(out), "--budget", "60")
    _refused(done, f"{out} is a ", "--out a path to a new or regular file")
    assert "shrunk in" not in done.output
    assert not (tmp_path / "elsewhere.json").exists()


def test_a_page_that_cannot_be_written_names_it_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        '{"kind": "header", "version": 1, "target": "m:f", "options": {}}\n'
        '{"kind": "seed", "seed": 0, "status": "pass", "wall_time": 0.1}\n'
    )
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith(".partial"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(files.os, "open", read_only)
    page = tmp_path / "page.html"
    done = run_cli("report", str(results), "--html", str(page))
    _refused(done, f"cannot write the report {page} (Read-only file system)",
             "--html a path in a folder you can write")  # fmt: skip
    trace = tmp_path / "run.trace"
    done = run_cli("run", RACE, "--seed", "0", "--trace", str(trace))
    _refused(done, f"cannot write the trace {trace}: Read-only file system", "fix the folder")
