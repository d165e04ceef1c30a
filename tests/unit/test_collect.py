"""Garbage collection runs at steps fixed by the run, not by the heap it started on."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

import pytest

import seedbed
from seedbed.sweep import sweep


class _Cycle:
    def __init__(self, log: list[str], label: str) -> None:
        self.me = self  # only the cycle collector frees it
        self.log, self.label = log, label

    def __del__(self) -> None:
        loop: Any = asyncio.events._get_running_loop()
        self.log.append(f"{self.label}@{loop.steps if loop is not None else 'outside'}")


async def _finalizers() -> list[str]:
    log: list[str] = []
    for round_ in range(30):
        _Cycle(log, f"c{round_}")
        for _ in range(300):  # 9,000 steps: two collections inside the run
            [object() for _ in range(60)]  # enough allocation to trigger automatic collection
            await asyncio.sleep(0)
    return list(log)  # a copy: the collection at the stretch's end appends the rest


def test_finalizers_run_at_the_same_step_whatever_the_heap_held_before() -> None:
    outcomes = set()
    keep: list[Any] = []
    for run in range(8):
        keep.append([[object()] for _ in range(run * 1500)])  # tracked objects: shifts the GC
        outcomes.add(tuple(seedbed.run(_finalizers, seed=0).value))
    assert len(outcomes) == 1
    (log,) = outcomes
    assert 10 <= len(log) < 30  # collected during the run, not all at its end


def test_garbage_from_before_a_run_is_not_finalized_inside_it() -> None:
    log: list[str] = []
    _Cycle(log, "before")  # unreachable now; the collector has not seen it yet

    async def main() -> list[str]:
        for _ in range(9000):
            await asyncio.sleep(0)
        return list(log)

    assert seedbed.run(main, seed=0).value == []
    gc.collect()
    assert log == ["before@outside"]


def test_the_collector_is_left_as_it_was() -> None:
    async def main() -> bool:
        return gc.isenabled()

    assert seedbed.run(main, seed=0).value is False
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        seedbed.run(main, seed=0)
        assert not gc.isenabled()
    finally:
        gc.enable()


def _world_in_a_cycle(log: list[str]) -> None:
    """A world's worth of objects that outlive its run in a cycle (as a Scenario's do)."""
    _Cycle(log, "world")


def test_between_runs_collects_once_the_heap_has_doubled(monkeypatch: Any) -> None:
    from seedbed.aio import _collect

    log: list[str] = []
    gc.disable()  # as during a sweep: nothing but `between_runs` collects
    try:
        monkeypatch.setattr(_collect, "FLOOR", 0)
        monkeypatch.setattr(_collect, "_left", [1])  # any heap is twice one block
        _world_in_a_cycle(log)
        assert _collect.between_runs() is True
        assert log == ["world@outside"]  # outside any run
        _world_in_a_cycle(log)
        assert _collect.between_runs() is False  # the heap has not doubled since
        assert log == ["world@outside"]
    finally:
        gc.enable()
        gc.collect()


def test_between_runs_refuses_a_running_loop() -> None:
    from seedbed.aio import _collect
    from seedbed.errors import SimulatorBug

    async def main() -> None:
        _collect.between_runs()

    with pytest.raises(SimulatorBug, match="outside any running loop"):
        asyncio.run(main())


def test_a_sweep_leaves_no_growing_heap(monkeypatch: Any) -> None:
    """Seed after seed in one process, runs leave cycles that no automatic collection
    reaches (collection is off in runs, and what they froze is old): `seedbed.sweep`
    collects them as it goes, so the heap stays bounded."""
    from seedbed.aio import _collect

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.kept = [[object()] for _ in range(200)]  # type: ignore[attr-defined]
        await asyncio.sleep(0.01)

    def growth(seeds: int) -> int:
        gc.collect()
        before = len(gc.get_objects())
        sweep(main, range(seeds))
        return len(gc.get_objects()) - before

    # This test process's heap is large: collect at 0.5% more than it, not twice it.
    monkeypatch.setattr(_collect, "GROWTH", 1.005)
    monkeypatch.setattr(_collect, "_left", [sys.getallocatedblocks()])
    bounded = max(growth(20), growth(60))
    monkeypatch.setattr(sys.modules["seedbed.sweep"], "between_runs", lambda: False)
    unbounded = growth(60)
    assert unbounded > 60 * 200, (bounded, unbounded)  # without it, every seed's leftovers stay
    assert bounded < unbounded / 2, (bounded, unbounded)
