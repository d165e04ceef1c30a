"""No command hangs on /dev/zero, a FIFO or a huge count, and no writer replaces
anything but a regular file (issue 27 items 5 and 6).

Each command runs as a subprocess under a timeout: a hang fails the test
instead of the suite.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = (
    '{"kind": "header", "version": 1, "target": "m:f", "options": {}, "seedbed": "0.1.0"}\n'
    '{"kind": "seed", "seed": 0, "status": "pass", "wall_time": 0.1}\n'
)


def seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ}
    environment.pop("SEEDBED_REEXEC", None)
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=environment, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def _one_line_refusal(done: subprocess.CompletedProcess[str], *says: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for text in says:
        assert text in done.stderr, done.stderr


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_huge_seed_count_is_refused_with_its_bound(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    done = seedbed("sweep", "examples.race:main", "--seeds", "9" * 23, "--out", out)
    _one_line_refusal(done, "10000000")
    done = seedbed("sweep", "examples.race:main", "--first", str(2**64 - 1), "--seeds", "2",
                   "--out", out)  # fmt: skip
    _one_line_refusal(done, "past the last seed")
    done = seedbed("check-determinism", "examples.race:main", "--seeds", "9" * 23)
    _one_line_refusal(done, "10000000")


@pytest.mark.parametrize(
    "args",
    [
        ("report", "{special}", "--html", "{tmp}/page.html"),
        ("check-history", "{special}", "--model", "register"),
        ("replay", "examples.race:main", "--trace", "{special}"),
        ("run", "examples.race:main", "--choices", "{special}"),
    ],
    ids=["report", "check-history", "replay", "run --choices"],
)
@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_readers_refuse_devices_and_fifos_without_hanging(
    args: tuple[str, ...], special: str, tmp_path: Path
) -> None:
    if special == "fifo":
        special = str(tmp_path / "pipe")
        os.mkfifo(special)
    done = seedbed(*(arg.format(special=special, tmp=tmp_path) for arg in args))
    _one_line_refusal(done, "not a regular file")


def test_a_sweep_refuses_a_results_path_that_is_not_a_regular_file(
    tmp_path: Path, fifo: Path
) -> None:
    (tmp_path / "results.jsonl").symlink_to(fifo)
    done = seedbed("sweep", "examples.race:main", "--seeds", "2", "--out", str(tmp_path))
    _one_line_refusal(done, "not a regular file")


def test_report_html_refuses_a_symlink_and_a_fifo_and_leaves_them_be(
    tmp_path: Path, fifo: Path
) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(RESULTS)
    kept = tmp_path / "kept.txt"
    kept.write_text("mine")
    link = tmp_path / "page.html"
    link.symlink_to(kept)
    _one_line_refusal(seedbed("report", str(results), "--html", str(link)), "a symlink")
    assert link.is_symlink() and kept.read_text() == "mine"
    _one_line_refusal(seedbed("report", str(results), "--html", str(fifo)), "a FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    page = tmp_path / "real.html"
    page.write_text("old page")
    assert seedbed("report", str(results), "--html", str(page)).returncode == 0
    assert "<html" in page.read_text().lower()
    assert not list(tmp_path.glob(".*.partial"))  # written beside it, renamed into place
