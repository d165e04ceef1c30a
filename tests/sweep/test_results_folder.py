"""One results folder, one target, one writer: a sweep never mixes or silently replaces results.

Issue 27 items 1 and 2: a second target's sweep into a folder used to leave
the first target's header over both, and a sweep without `--resume` replaced
the previous results file without a word.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.sweep._cli import RACE, records, seedbed, write_program

from seedbed._harness.sweeps._folder import LOCK_NAME


def _seeds(path: Path) -> list[int]:
    return [r["seed"] for r in records(path) if r["kind"] == "seed"]


def test_the_header_names_the_target_its_options_and_seedbeds_version(tmp_path: Path) -> None:
    seedbed("sweep", RACE, "--seeds", "2", "--max-steps", "5000", "--out", str(tmp_path))
    header = records(tmp_path / "results.jsonl")[0]
    assert header["target"] == RACE and header["options"]["max_steps"] == 5000
    assert isinstance(header["seedbed"], str) and header["seedbed"]


def test_a_second_target_into_the_same_folder_is_refused_naming_both(tmp_path: Path) -> None:
    other = write_program(tmp_path, "return seed")
    out = tmp_path / "out"
    seedbed("sweep", RACE, "--seeds", "3", "--out", str(out))
    before = (out / "results.jsonl").read_bytes()
    for extra in ((), ("--resume",)):
        done = seedbed("sweep", other, "--seeds", "2", "--out", str(out), *extra)
        assert done.returncode == 2, done.stdout + done.stderr
        assert RACE in done.stderr and other in done.stderr and "--out" in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert (out / "results.jsonl").read_bytes() == before


def test_a_sweep_into_a_folder_with_results_is_refused_without_resume_or_fresh(
    tmp_path: Path,
) -> None:
    seedbed("sweep", RACE, "--seeds", "3", "--out", str(tmp_path))
    before = (tmp_path / "results.jsonl").read_bytes()
    done = seedbed("sweep", RACE, "--out", str(tmp_path))  # the default 100 seeds
    assert done.returncode == 2
    assert "already holds 3 seeds" in done.stderr and "--resume" in done.stderr
    assert "--fresh" in done.stderr
    assert (tmp_path / "results.jsonl").read_bytes() == before


def test_fresh_moves_the_old_results_aside_and_says_where(tmp_path: Path) -> None:
    seedbed("sweep", RACE, "--seeds", "3", "--out", str(tmp_path))
    before = (tmp_path / "results.jsonl").read_bytes()
    done = seedbed("sweep", RACE, "--seeds", "2", "--first", "7", "--out", str(tmp_path), "--fresh")
    assert done.returncode in (0, 1), done.stderr
    aside = tmp_path / "results.1.jsonl"
    assert f"moved the earlier results to {aside}" in done.stderr
    assert aside.read_bytes() == before
    assert sorted(_seeds(tmp_path / "results.jsonl")) == [7, 8]
    again = seedbed("sweep", RACE, "--seeds", "1", "--out", str(tmp_path), "--fresh")
    assert str(tmp_path / "results.2.jsonl") in again.stderr and aside.read_bytes() == before
    both = seedbed("sweep", RACE, "--seeds", "1", "--out", str(tmp_path), "--fresh", "--resume")
    assert both.returncode == 2 and "pick one" in both.stderr


def test_a_concurrent_sweep_into_a_locked_folder_is_refused(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    fd = os.open(tmp_path / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # what a running sweep holds
    try:
        done = seedbed("sweep", RACE, "--seeds", "2", "--out", str(tmp_path))
    finally:
        os.close(fd)
    assert done.returncode == 2 and "another sweep is writing" in done.stderr
    assert not (tmp_path / "results.jsonl").exists()
    assert seedbed("sweep", RACE, "--seeds", "2", "--out", str(tmp_path)).returncode in (0, 1)


def test_a_lock_left_by_a_sigkilled_sweep_is_stale_and_taken_again(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         f"fd = os.open({str(tmp_path / LOCK_NAME)!r}, os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert (tmp_path / LOCK_NAME).exists()  # the file stays; the kernel dropped the lock
    done = seedbed("sweep", RACE, "--seeds", "2", "--out", str(tmp_path))
    assert done.returncode in (0, 1), done.stderr
    assert sorted(_seeds(tmp_path / "results.jsonl")) == [0, 1]


def test_a_full_disk_names_the_file_keeps_earlier_seeds_and_prints_the_resume_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seedbed._harness.sweeps import _results
    from seedbed._harness.sweeps._engine import SweepSpec, run_sweep
    from seedbed.errors import UsageError

    written = {"records": 0}
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        if b'"kind": "seed"' in data:
            written["records"] += 1
            if written["records"] > 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(_results.os, "write", write)
    spec = SweepSpec(RACE, 0, 6, 1, tmp_path, argv=["sweep", RACE, "--out", str(tmp_path)])
    with pytest.raises(UsageError) as refused:
        run_sweep(spec)
    message = str(refused.value)
    assert str(tmp_path / "results.jsonl") in message and "No space left" in message
    assert message.endswith(f"sweep {RACE} --out {tmp_path} --resume")
    assert len(_seeds(tmp_path / "results.jsonl")) == 2
