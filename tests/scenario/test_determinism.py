"""One seed, one execution: across processes, string-hash seeds and entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import programs  # tests/scenario is on sys.path under pytest's default import mode
import pytest

import seedbed
from seedbed import Nondeterminism

REPO = Path(__file__).resolve().parents[2]
TARGET = "tests/scenario/programs.py:fifty_tasks"


def run_command(*args: str, hash_seed: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    env.pop("SEEDBED_REEXEC", None)
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_a_run_gives_the_same_hash_in_fresh_processes_under_different_hash_seeds() -> None:
    hashes = set()
    for hash_seed in ("1", "2", "random"):
        done = run_command("run", TARGET, "--seed", "7", "--json", hash_seed=hash_seed)
        assert done.returncode == 0, done.stderr
        hashes.add(json.loads(done.stdout)["trace_hash"])
    assert len(hashes) == 1


def test_the_in_process_run_matches_the_command() -> None:
    done = run_command("run", TARGET, "--seed", "7", "--json", hash_seed="0")
    in_process = seedbed.run(programs.fifty_tasks, seed=7)
    assert json.loads(done.stdout)["trace_hash"] == in_process.trace_hash


def test_check_determinism_runs_fresh_processes_and_returns_their_common_hash() -> None:
    expected = seedbed.run(programs.fifty_tasks, seed=3).trace_hash
    assert seedbed.check_determinism(programs.fifty_tasks, seed=3, runs=2) == expected


def test_check_determinism_catches_a_program_that_depends_on_its_process() -> None:
    with pytest.raises(Nondeterminism) as caught:
        seedbed.check_determinism(programs.depends_on_the_process, seed=1, runs=3)
    message = str(caught.value)
    assert "first divergent event" in message
    assert "recorded: time" in message and "actual:   time" in message
    assert "seed=1" in message


def test_different_seeds_explore_different_executions() -> None:
    hashes = {seedbed.run(programs.fifty_tasks, seed=seed).trace_hash for seed in range(20)}
    assert len(hashes) >= 15
    values = {seedbed.run(programs.fifty_tasks, seed=seed).value for seed in range(5)}
    assert len(values) > 1


def test_a_recorded_trace_replays_and_a_changed_program_is_caught_at_its_first_divergence(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    recorded = seedbed.run(programs.fifty_tasks, seed=9, trace=path)
    assert seedbed.replay(programs.fifty_tasks, trace=path).trace_hash == recorded.trace_hash

    async def changed() -> object:
        await asyncio_sleep(0.0001)  # one extra timer shifts everything after it
        return await programs.fifty_tasks()

    with pytest.raises(Nondeterminism) as caught:
        seedbed.replay(changed, trace=path)
    assert "recorded:" in str(caught.value) and "actual:" in str(caught.value)
    assert "at event" in str(caught.value)


async def asyncio_sleep(delay: float) -> None:
    import asyncio

    await asyncio.sleep(delay)


def cluster_in_a_fresh_process(seed: int, hash_seed: str) -> str:
    code = (
        "import sys; sys.path.insert(0, 'tests/scenario'); import programs; "
        f"print(programs.echo_cluster({seed}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_five_node_echo_cluster_under_faults_hashes_the_same_in_fresh_processes() -> None:
    first = cluster_in_a_fresh_process(7, hash_seed="1")
    second = cluster_in_a_fresh_process(7, hash_seed="2")
    assert first == second
    trace_hash, ok, errors, pongs = first.split()
    assert int(ok) > 10 and int(errors) > 0 and int(pongs) > 0  # faults really happened
    assert programs.echo_cluster(8).split()[0] != trace_hash
