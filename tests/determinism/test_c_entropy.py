"""C code's own entropy (issue 41 item 3): a QUIC world whose OpenSSL draws its
key shares runs the same choices and sends other bytes in each process. The
hashes must differ (every delivered payload is digested), and both
`check-determinism` and a sweep's recheck must say that code outside seedbed's
reach drew its own entropy, naming the first differing delivery, instead of
blaming state leaking between seeds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("aioquic", reason="aioquic (a dev dependency) is not installed")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TARGET = f"{HERE / 'quic_world.py'}:world"


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": f"{REPO / 'src'}:{HERE}"}
    env.pop("SEEDBED_REEXEC", None)
    return env


def _seedbed(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seedbed", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, check=False)  # fmt: skip


def test_two_processes_running_one_quic_seed_get_different_hashes() -> None:
    code = "import quic_world; print(quic_world.world(2).trace_hash)"
    hashes = {
        subprocess.run(
            [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    }
    assert len(hashes) == 2


def test_check_determinism_names_the_c_level_entropy_and_the_delivery() -> None:
    done = _seedbed("check-determinism", TARGET, "--seeds", "1", "--jobs", "1")
    assert done.returncode == 1, done.stderr
    said = done.stdout
    assert "1 of 1 seeds diverged" in said
    assert "code outside seedbed's reach" in said and "drew its own entropy" in said
    assert "the delivery c1 -> server at step" in said
    assert "ways out:" in said and "state leaking" not in said


def test_a_sweeps_recheck_names_the_c_level_entropy_too(tmp_path: Path) -> None:
    done = _seedbed("sweep", TARGET, "--seeds", "1", "--jobs", "1", "--out", str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "ran differently (seed 0)" in done.stdout
    assert "drew its own entropy" in done.stdout and "state leaking" not in done.stdout
