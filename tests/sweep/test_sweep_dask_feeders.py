"""The Dask backend's feeders: one long task per worker thread, fed batch after batch."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.sweep._cli import write_program

from seedbed._harness.sweeps import _dask_feed
from seedbed._harness.sweeps._dask import DaskPool
from seedbed._harness.sweeps._pool import WorkerPool
from seedbed.errors import UsageError

pytest.importorskip(
    "distributed", reason="the Dask backend's tests need dask.distributed: uv sync installs it"
)

# Fails for about a third of the seeds, with a message that names the seed.
BODY = "assert random.random() > 0.3, f'unlucky {seed}'"
KEPT = ("seed", "status", "message", "trace_hash", "steps", "virtual_time", "replay")


def _settings(tmp_path: Path) -> dict[str, Any]:
    return {"target": write_program(tmp_path, BODY), "options": {}, "runner": "seedbed"}


def _answers(pool: Any, seeds: range) -> list[tuple[Any, ...]]:
    found: list[dict[str, Any]] = []
    pool.run(({"seed": seed} for seed in seeds), found.append)
    return sorted(tuple(record[key] for key in KEPT) for record in found)


def _feed_tasks(pool: DaskPool) -> list[str]:
    """The feed tasks the cluster's scheduler holds for this sweep."""

    def keys(dask_scheduler: Any) -> list[str]:
        return sorted(str(key) for key in dask_scheduler.tasks if "seedbed-feed" in str(key))

    found: list[str] = pool._client.run_on_scheduler(keys)
    return found


def test_every_batch_of_a_search_goes_to_the_same_feeders_and_idle_ones_start_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search calls `run` once per batch of plans: the cluster keeps one task per
    worker thread across them (a task per batch cost Dask 6 ms of CPU), and a feeder
    that ended for want of work is replaced when work comes, its seeds not lost."""
    settings = _settings(tmp_path)
    local = WorkerPool(settings, 2, tmp_path / "logs", seed_timeout=60.0)
    try:
        expected = [_answers(local, seeds) for seeds in (range(30), range(30, 40), range(40, 60))]
    finally:
        local.close()
    monkeypatch.setattr(_dask_feed, "IDLE", 2.0)  # local:N's feeders run in this process
    pool = DaskPool("local:2", settings, seed_timeout=60.0)
    try:
        assert _answers(pool, range(30)) == expected[0]
        first = _feed_tasks(pool)
        assert len(first) == 2, first
        assert _answers(pool, range(30, 40)) == expected[1]
        assert _feed_tasks(pool) == first
        time.sleep(4.0)  # past IDLE: both feeders end
        assert _answers(pool, range(40, 60)) == expected[2]
        again = _feed_tasks(pool)
        assert len(again) == 2 and not set(again) & set(first), (first, again)
    finally:
        pool.close()


# Another user's task holding a worker's thread (local:N's workers are threads here).
_holding, _released = threading.Event(), threading.Event()


def _hold_a_thread() -> bool:
    _holding.set()
    return _released.wait(timeout=60)  # False: it was never released, the sweep waited on it


def test_a_worker_busy_with_other_work_gets_no_batches_its_feeder_would_sit_on(
    tmp_path: Path,
) -> None:
    """On a cluster shared with other work a feeder may wait for its thread: it gets
    batches once it runs, so the sweep ends on the free workers meanwhile."""
    settings = _settings(tmp_path)
    local = WorkerPool(settings, 2, tmp_path / "logs", seed_timeout=60.0)
    try:
        expected = _answers(local, range(20))
    finally:
        local.close()
    pool = DaskPool("local:2", settings, seed_timeout=60.0)
    try:
        busy = sorted(pool._client.nthreads())[0]
        other = pool._client.submit(_hold_a_thread, workers=[busy], pure=False)
        assert _holding.wait(timeout=60)
        assert _answers(pool, range(20)) == expected
        _released.set()
        assert other.result() is True, "the sweep waited for the busy worker"
    finally:
        _released.set()
        pool.close()


def test_a_feeder_that_fails_ends_the_sweep_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> bool:
        raise RuntimeError("the feeder broke")

    monkeypatch.setattr(_dask_feed, "_run", broken)
    pool = DaskPool("local:1", _settings(tmp_path), seed_timeout=60.0)
    try:
        with pytest.raises(UsageError) as caught:
            pool.run([{"seed": 1}, {"seed": 2}], lambda record: None)
    finally:
        pool.close()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("a Dask task running seeds on inproc://")
    assert "(RuntimeError: the feeder broke); --resume continues the sweep" in message
