"""`seedbed check-determinism`: each seed twice, under two hash seeds, compared."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.sweep._cli import RACE, seedbed

SET_ORDER = """
import asyncio

async def alpha(): await asyncio.sleep(0.001)
async def beta(): await asyncio.sleep(0.001)
async def gamma(): await asyncio.sleep(0.001)
async def delta(): await asyncio.sleep(0.001)
async def epsilon(): await asyncio.sleep(0.001)
WORKERS = {f.__name__: f for f in (alpha, beta, gamma, delta, epsilon)}

async def main():
    names = {"alpha", "beta", "gamma", "delta", "epsilon"}
    for name in names:  # the order depends on the string-hash seed
        asyncio.get_running_loop().create_task(WORKERS[name]())  # traced by coroutine name
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


# Plain functions f(seed) that build and run their own Simulation (issue 23.3):
# a divergence is reported as one, never as a complaint about options.
SIMULATION_SET_ORDER = """
import asyncio
from seedbed import Simulation

async def visit():
    await asyncio.sleep(0.001)

def world(seed):
    sim = Simulation(seed=seed)
    for name in {"alpha", "beta", "gamma", "delta", "epsilon"}:  # string-hash order
        sim.client(name, visit)
    return sim.run(max_time=5.0)
"""

SIMULATION_LEAK = """
import asyncio
from seedbed import Simulation

runs = 0

def world(seed):
    global runs
    runs += 1  # survives from one seed to the next in the same process
    count = runs

    async def visit():
        for _ in range(count):
            await asyncio.sleep(0.001)

    sim = Simulation(seed=seed)
    sim.client("c1", visit)
    return sim.run(max_time=5.0)
"""


def test_a_simulation_function_that_diverges_is_reported_with_its_first_differing_event(
    tmp_path: Path,
) -> None:
    (tmp_path / "prog.py").write_text(SIMULATION_SET_ORDER)
    done = seedbed("check-determinism", f"{tmp_path}/prog.py:world", "--seeds", "2", "--jobs", "1")
    assert done.returncode == 1, done.stderr
    assert "sets its own budgets" not in done.stdout + done.stderr
    assert "2 of 2 seeds diverged" in done.stdout
    assert "  trace_hash: " in done.stdout
    assert "first differing event " in done.stdout
    for hash_seed in ("0", "1"):  # each side names a node the set put first
        assert re.search(rf"PYTHONHASHSEED={hash_seed}: .*(alpha|beta|gamma|delta|epsilon)",
                         done.stdout), done.stdout  # fmt: skip


def test_a_simulation_function_keeping_state_between_seeds_is_reported_as_such(
    tmp_path: Path,
) -> None:
    (tmp_path / "prog.py").write_text(SIMULATION_LEAK)
    done = seedbed("check-determinism", f"{tmp_path}/prog.py:world", "--seeds", "2", "--jobs", "1")
    assert done.returncode == 1, done.stderr
    assert "sets its own budgets" not in done.stdout + done.stderr
    assert "2 of 2 seeds diverged" in done.stdout
    assert "depends on the seeds run before it in the same process" in done.stdout
