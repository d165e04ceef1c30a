"""`seedbed sweep --scheduler`: seeds on a Dask cluster, the same results file as locally."""

from __future__ import annotations

import os
import signal
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.sweep._cli import records, seed_results, seedbed, start, write_program

from seedbed._harness.sweeps import _dask
from seedbed._harness.sweeps._dask import DASK_REQUIREMENT
from seedbed.cli import cli

pytest.importorskip(
    "distributed", reason="the Dask backend's tests need dask.distributed: uv sync installs it"
)

# A few ms of CPU per seed, a fifth of the seeds fail: slow enough to kill a worker midway.
REPO = Path(__file__).resolve().parents[2]
SLOW = "for _ in range(300_000):\n    pass\nassert random.random() > 0.2, 'unlucky draw'"


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


def _dask_workers(parent: int) -> list[int]:
    """The Dask worker processes of a cluster `parent` started (its nannies spawn them)."""
    workers = []
    for child in _children(parent):
        command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        if b"multiprocessing" in command and b"spawn_main" in command:
            workers.append(child)
    return workers


def _wait(condition: object, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} after {timeout} s")


def _seed_count(path: Path) -> int:
    return path.read_text().count('"kind": "seed"') if path.exists() else 0


@pytest.fixture(scope="module")
def cluster_of_processes() -> Iterator[str]:
    """A scheduler and two worker processes, as on a real cluster (`local:N` runs its
    workers as threads of the sweep, so none of them can die alone): its address."""
    distributed = pytest.importorskip("distributed")
    hash_seed = os.environ.get("PYTHONHASHSEED")
    try:
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster:
            yield cluster.scheduler_address
    finally:
        # Its nannies set PYTHONHASHSEED=6640 in this process each time they
        # spawn a worker; later tests' subprocesses would inherit it.
        if hash_seed is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = hash_seed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds workers in /proc")
def test_a_cluster_losing_a_worker_midway_writes_the_same_results_as_a_local_sweep(
    tmp_path: Path, cluster_of_processes: str
) -> None:
    target = write_program(tmp_path, SLOW)
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    seedbed("sweep", target, "--seeds", "120", "--out", str(local))
    sweep = start("sweep", target, "--seeds", "120", "--out", str(cluster),
                  "--scheduler", cluster_of_processes)  # fmt: skip
    results = cluster / "results.jsonl"
    try:
        _wait(lambda: _seed_count(results) >= 10, "no 10 records from the cluster")
        workers = _dask_workers(os.getpid())
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
        killed_at = _seed_count(results)
        stdout, stderr = sweep.communicate(timeout=300)
    finally:
        if sweep.poll() is None:
            sweep.kill()
    assert killed_at < 120, "the sweep ended before the worker was killed"
    assert sweep.returncode == 1, (stdout, stderr)
    assert "120 seeds:" in stdout and "2 Dask workers" in stdout
    assert seed_results(results) == seed_results(local / "results.jsonl")  # no seed twice
    assert len(seed_results(results)) == 120
    assert all(r["worker"].startswith("tcp://") for r in records(results)[1:])
    assert "Traceback" not in stderr


def test_a_local_cluster_runs_its_workers_in_the_sweep_and_writes_the_local_results(
    tmp_path: Path,
) -> None:
    target = write_program(tmp_path, SLOW)
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    seedbed("sweep", target, "--seeds", "30", "--out", str(local))
    done = seedbed("sweep", target, "--seeds", "30", "--out", str(cluster),
                   "--scheduler", "local:2")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "2 Dask workers" in done.stdout
    results = cluster / "results.jsonl"
    assert seed_results(results) == seed_results(local / "results.jsonl")
    assert {r["worker"].split("://")[0] for r in records(results)[1:]} == {"inproc"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds workers in /proc")
def test_ctrl_c_stops_a_local_cluster_sweep_without_waiting_for_its_batches(
    tmp_path: Path,
) -> None:
    """`local:N`'s workers are threads of the sweep: a batch still running must stop
    with it, not hold the exit until its last seed (batches of this sweep: 50 seeds)."""
    # About a second a seed: a batch of 50 would hold the exit well past the timeout.
    target = write_program(tmp_path, "for _ in range(20_000_000):\n    pass")
    sweep = start("sweep", target, "--seeds", "400", "--out", str(tmp_path / "out"),
                  "--scheduler", "local:2")  # fmt: skip
    results = tmp_path / "out" / "results.jsonl"
    try:
        _wait(lambda: _seed_count(results) >= 2, "no 2 records from the cluster")
        sweep.send_signal(signal.SIGINT)
        stdout, stderr = sweep.communicate(timeout=45)
    finally:
        if sweep.poll() is None:
            sweep.kill()
    assert sweep.returncode == 130, (stdout, stderr)
    assert "--resume" in stdout
    assert _seed_count(results) < 100
    assert not _seedbed_workers(target), "a seedbed worker outlived its sweep"


def _seedbed_workers(target: str) -> list[int]:
    """The seedbed worker processes still alive that run `target`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or it ended
            continue
        if b"sweeps._worker" in command and target.encode() in command:
            found.append(int(entry.name))
    return found


def test_without_the_extra_the_sweep_says_which_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    done = CliRunner().invoke(cli, ["sweep", "examples.race:main", "--seeds", "3",
                                    "--out", str(tmp_path), "--scheduler", "local:2"])  # fmt: skip
    assert done.exit_code == 2
    assert done.output == (
        "error: the Dask backend needs dask.distributed, which is not installed here: "
        "pip install 'dask[distributed]>=2024.1' (or uv add 'dask[distributed]>=2024.1')\n"
    )


def test_the_command_it_gives_installs_what_the_extra_holds() -> None:
    """seedbed is on no index, so `pip install 'seedbed[dask]'` cannot work: the
    message names the extra's own requirement, and it must stay the extra's."""
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extra["dask"] == [DASK_REQUIREMENT]


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("tcp://127.0.0.1:9", "cannot reach a Dask scheduler there"),  # nothing listens
        ("127.0.0.1", "not a scheduler address; write tcp://HOST:PORT"),
        ("local:0", "write local:N with N >= 1 workers"),
    ],
)
def test_a_bad_scheduler_address_is_a_one_line_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: str, says: str
) -> None:
    monkeypatch.setattr(_dask, "CONNECT_TIMEOUT", 2.0)
    started = time.monotonic()
    done = CliRunner().invoke(cli, ["sweep", "examples.race:main", "--seeds", "3",
                                    "--out", str(tmp_path), "--scheduler", address])  # fmt: skip
    assert time.monotonic() - started < 30
    assert done.exit_code == 2, done.output
    assert done.output.startswith(f"error: --scheduler {address}: ")
    assert says in done.output
    assert done.output.count("\n") == 1


def test_a_target_the_workers_cannot_import_is_a_one_line_error(tmp_path: Path) -> None:
    done = seedbed("sweep", "no_such_module:main", "--seeds", "3", "--out", str(tmp_path),
                   "--scheduler", "local:1")  # fmt: skip
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: on Dask worker inproc://"), done.stderr
    assert "cannot import 'no_such_module'" in last
    assert "Traceback" not in done.stderr
