"""Garbage collection runs at steps fixed by the run, not by the heap it started on."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import seedbed


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
        for _ in range(40):
            [object() for _ in range(60)]  # enough allocation to trigger automatic collection
            await asyncio.sleep(0)
    return log


def test_finalizers_run_at_the_same_step_whatever_the_heap_held_before() -> None:
    outcomes = set()
    keep: list[Any] = []
    for run in range(8):
        keep.append([[object()] for _ in range(run * 1500)])  # tracked objects: shifts the GC
        outcomes.add(tuple(seedbed.run(_finalizers, seed=0).value))
    assert len(outcomes) == 1
    (log,) = outcomes
    assert 20 <= len(log) <= 30  # collected during the run, not all at its end


def test_garbage_from_before_a_run_is_not_finalized_inside_it() -> None:
    log: list[str] = []
    _Cycle(log, "before")  # unreachable now; the collector has not seen it yet

    async def main() -> list[str]:
        for _ in range(3000):
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
