"""The sweep's time left comes from finished seeds only (issue 28.8).

A Dask cluster (or a worker pool) takes a while to start; counting that
time as if seeds were running made a sweep that ended 50 s later say
"about 710 s left". Until two seeds have finished the line says it is
estimating; then the rate is that of the seeds finished since the first.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from seedbed._harness.sweeps import _display


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _status(progress: _display.LiveProgress, out: io.StringIO) -> str:
    progress._status()
    return out.getvalue().splitlines()[-1]


def test_time_left_is_estimating_until_seeds_finish_then_ignores_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = _Clock()
    monkeypatch.setattr(_display.time, "monotonic", clock)
    out = io.StringIO()
    progress = _display.LiveProgress(100, 0, 0, console=Console(file=out, force_terminal=False))
    clock.now += 60  # the cluster starts: a minute, no seed finished
    assert _status(progress, out).endswith(
        "0/100 seeds, 0 failed, 0.0 seeds/s, estimating time left"
    )
    progress.seed_done({"status": "pass", "seed": 0})
    assert "estimating time left" in _status(progress, out)  # one seed: no rate yet
    for seed in range(1, 11):  # then a seed every half second
        clock.now += 0.5
        progress.seed_done({"status": "pass", "seed": seed})
    # 10 seeds in 5 s since the first finished: 89 left take about 44 s, not the
    # 89 / (11 / 65 s) = 526 s that counting the start-up would say.
    assert _status(progress, out).endswith("about 44 s left")
