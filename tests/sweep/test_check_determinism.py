"""`seedbed check-determinism`: each seed twice, under two hash seeds, compared."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sweep._cli import RACE, seedbed

SET_ORDER = """
import asyncio

async def worker(name):
    await asyncio.sleep(0.001)

async def main():
    names = {"alpha", "beta", "gamma", "delta", "epsilon"}
    for name in names:  # the order depends on the string-hash seed
        asyncio.get_running_loop().create_task(worker(name), name=name)
    await asyncio.sleep(1)
"""

LEAK = """
calls = 0

async def main():
    global calls
    calls += 1  # survives from one seed to the next in the same process
    return calls
"""


def test_a_deterministic_program_passes(tmp_path: Path) -> None:
    done = seedbed("check-determinism", RACE, "--seeds", "12", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "seeds": 12, "diverged": [], "divergences": []
    }  # fmt: skip


def test_iterating_a_set_of_strings_is_caught_with_its_first_differing_event(
    tmp_path: Path,
) -> None:
    (tmp_path / "prog.py").write_text(SET_ORDER)
    done = seedbed("check-determinism", f"{tmp_path}/prog.py:main", "--seeds", "3", "--jobs", "1")
    assert done.returncode == 1, done.stderr
    assert "3 of 3 seeds diverged" in done.stdout
    assert "seed 0 ran differently under PYTHONHASHSEED=0 and 1:" in done.stdout
    assert "  trace_hash: " in done.stdout
    assert "first differing event " in done.stdout
    assert "PYTHONHASHSEED=0: task " in done.stdout and "PYTHONHASHSEED=1: task " in done.stdout
    assert "replay: " in done.stdout and "prog.py:main --seed 0" in done.stdout


def test_state_kept_between_seeds_in_one_process_is_caught(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(LEAK)
    done = seedbed("check-determinism", f"{tmp_path}/prog.py:main", "--seeds", "4", "--jobs", "1")
    assert done.returncode == 1, done.stderr
    assert "result_digest: " in done.stdout
    assert "depends on the seeds run before it in the same process" in done.stdout
