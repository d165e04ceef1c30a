"""`os.getloadavg()` inside a run reads the simulated machine (issue 41 item 5):
the same in every process, so a program that backs off by load replays."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import seedbed
from seedbed.aio import _load

pytestmark = pytest.mark.skipif(not hasattr(os, "getloadavg"), reason="no os.getloadavg here")

PROGRAM = """
import os, seedbed
from os import getloadavg as copied

async def main():
    busy = os.getloadavg()[0] > 1.5  # a library backing off on a loaded machine
    return [os.getloadavg(), copied(), busy]

r = seedbed.run(main, seed=3)
print(r.trace_hash, r.value)
"""


def test_a_run_reads_an_idle_simulated_machine_and_the_real_one_after() -> None:
    async def main() -> object:
        return os.getloadavg()

    assert seedbed.run(main, seed=1).value == (0.0, 0.0, 0.0)
    assert os.getloadavg is _load._real_getloadavg  # outside the run: the real function again


def test_two_processes_agree_on_the_load_a_run_reads(tmp_path: Path) -> None:
    script = tmp_path / "load.py"
    script.write_text(PROGRAM)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    outputs = {
        subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(outputs) == 1
    assert "[(0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False]" in outputs.pop()
