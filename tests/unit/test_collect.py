"""Garbage collection runs at steps fixed by the run, not by the heap it started on."""

from __future__ import annotations

import asyncio
import gc
import os
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


async def _unretrieved(fired: list[str]) -> asyncio.Future[None]:
    """The issue's case: a future whose exception nobody retrieves, returned by the run."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: fired.append(context["message"]))
    future: asyncio.Future[None] = loop.create_future()
    try:
        raise ValueError("never retrieved")
    except ValueError as exc:
        future.set_exception(exc)  # its traceback holds this frame, which holds it: a cycle
    return future


_FACTORIES = {
    "new_event_loop": lambda: seedbed.new_event_loop(seed=1),
    "policy": lambda: seedbed.EventLoopPolicy(seed=1).new_event_loop(),
}


@pytest.mark.parametrize("factory", sorted(_FACTORIES))
def test_a_future_dropped_after_the_loop_closed_is_reported_as_the_next_loop_is_made(
    factory: str,
) -> None:
    """Issue 42, item 6: the run leaves the future old, and a test drops it after the
    loop's close; it reached its handler ~93,000 allocations later, in whatever
    library code allocated then (pytest's compile() on 3.11, which failed). Now the
    next held loop finalizes it while it is made, before any of the next test runs."""
    make = _FACTORIES[factory]
    fired: list[str] = []
    gc.disable()  # no automatic collection may get there first
    try:
        loop = make()
        held = loop.run_until_complete(_unretrieved(fired))
        loop.close()
        del held
        assert fired == []
        make().close()
        assert fired == ["Future exception was never retrieved"]
    finally:
        gc.enable()


def test_a_survivor_dropped_before_the_close_is_reported_by_the_close() -> None:
    fired: list[str] = []
    loop = seedbed.new_event_loop(seed=1)
    held = loop.run_until_complete(_unretrieved(fired))
    del held
    gc.disable()
    try:
        loop.close()
    finally:
        gc.enable()
    assert fired == ["Future exception was never retrieved"]


def test_no_full_collection_while_the_survivors_are_held_or_gone() -> None:
    """A full collection costs the whole heap: a boundary runs one only when a
    survivor with a finalizer is garbage, not while the test still holds it (as
    anyio's runner holds its task past the close) nor once it is gone."""
    from seedbed.aio import _collect

    fired: list[str] = []
    loop = seedbed.new_event_loop(seed=1)
    held = loop.run_until_complete(_unretrieved(fired))
    loop.close()
    gc.disable()
    try:
        assert _collect.at_boundary(forget=False) is False  # held: nothing to finalize
        del held
        assert _collect.at_boundary(forget=False) is True  # a dead cycle now
        assert fired == ["Future exception was never retrieved"]
        assert _collect.at_boundary(forget=True) is False  # gone
    finally:
        gc.enable()


class _Holder:
    """A run's object without a finalizer, in a cycle, holding one that has one."""

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.me, self.future = self, future


def test_a_survivor_held_by_a_dead_cycle_of_the_run_is_finalized() -> None:
    """The holder takes a weak reference, so the part the boundary examines starts
    from it too (aiojobs' Scheduler holds its tasks so)."""
    fired: list[str] = []

    async def main() -> _Holder:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: fired.append("reported"))
        future: asyncio.Future[None] = loop.create_future()
        future.set_exception(ValueError("never retrieved"))  # no traceback: no cycle
        return _Holder(future)

    loop = seedbed.new_event_loop(seed=1)
    held = loop.run_until_complete(main())
    loop.close()
    gc.disable()
    try:
        del held
        seedbed.new_event_loop(seed=1).close()
        assert fired == ["reported"]
    finally:
        gc.enable()


def test_the_next_loop_runs_the_same_whatever_the_last_one_left() -> None:
    """The boundary's collection runs outside any run: the next loop's trace is the same."""

    async def main() -> int:
        await asyncio.gather(*(asyncio.sleep(0.001 * n) for n in range(20)))
        return asyncio.get_running_loop().steps  # type: ignore[attr-defined, no-any-return]

    def next_hash(leave: bool) -> str:
        fired: list[str] = []
        loop = seedbed.new_event_loop(seed=1)
        held = loop.run_until_complete(_unretrieved(fired)) if leave else None
        loop.close()
        del held
        loop = seedbed.new_event_loop(seed=3)
        loop.run_until_complete(main())
        loop.close()
        return loop.trace.hash

    assert next_hash(leave=True) == next_hash(leave=False)


_PID = os.getpid()  # the real one, as psutil.Process() keeps it (a run's is simulated)


def _statm() -> str:
    """What a process's own monitoring reads (distributed's GC diagnosis, via psutil)."""
    with open(f"/proc/{_PID}/statm", encoding="ascii") as statm:
        return statm.read()


async def _collecting() -> int:
    for _ in range(9_000):  # two of the run's own collections
        await asyncio.sleep(0)
    gc.collect()  # and one the program asks for
    return 1


def test_a_gc_callback_registered_before_a_run_does_not_escape_from_it() -> None:
    phases: list[str] = []

    def monitor(phase: str, info: dict[str, Any]) -> None:
        _statm()
        phases.append(phase)

    gc.callbacks.append(monitor)
    try:
        assert seedbed.run(_collecting, seed=3).value == 1
        assert phases == []  # the run's collections are the run's own
        gc.collect()
        assert phases == ["start", "stop"]  # and it is back, in force, after the run
        assert gc.callbacks[-1] is monitor
    finally:
        gc.callbacks.remove(monitor)


# The escape is raised in the callback, which the collector reports as unraisable.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_gc_callback_the_program_registers_still_escapes() -> None:
    def sneaky(phase: str, info: dict[str, Any]) -> None:
        _statm()

    async def main() -> None:
        gc.callbacks.append(sneaky)
        await _collecting()

    try:
        with pytest.raises(seedbed.SimulationEscape, match="statm"):
            seedbed.run(main, seed=3)
    finally:
        gc.callbacks.remove(sneaky)
