"""Shrinking keeps the issue-24 classes in play: a bug only an operation crash
exposes shrinks to that one fault, the other classes' rounds dropped."""

from __future__ import annotations

import asyncio
from typing import Any

import seedbed
from seedbed import FaultProfile, Scenario, Simulation, fs
from seedbed._harness.shrink._search import Shrinker

_acked: dict[str, int] = {}


def _world(sim: Simulation) -> None:
    """A log that acknowledges each record before fsyncing it (the bug): a crash
    just before the fsync loses an acknowledged record, found at the restart."""
    _acked.clear()

    async def host() -> None:
        me = seedbed.current_node() or ""
        path = f"/{me}.log"
        if _acked.get(me):
            data = await fs.read_file(path)
            kept = data.count(b"\n")
            assert kept >= _acked[me], f"{_acked[me]} acknowledged records, {kept} kept"
        else:
            await fs.write_file(path, b"", durable=True)
        async with await fs.open(path, "a") as f:
            n = _acked.get(me, 0)
            while True:
                await f.write(b"record %d\n" % n)
                n += 1
                _acked[me] = n  # acknowledged: too early
                await f.fsync()
                await asyncio.sleep(0.02)

    for name in ("h1", "h2", "h3"):
        sim.host(name, host)


PROFILE = FaultProfile(
    operation_crash_per_second=0.5,
    clock_skew_per_second=1.0,
    latency_spike_per_second=1.0,
    pause_per_second=1.0,
    max_down=1,
)
SCENARIO = Scenario("early ack", _world, faults=PROFILE, duration=20.0)


def _failing_seed() -> int:
    for seed in range(20):
        try:
            SCENARIO.run(seed=seed)
        except Exception:
            return seed
    raise AssertionError("no seed of 20 failed")


def test_a_bug_only_an_operation_crash_exposes_shrinks_to_that_fault() -> None:
    seed = _failing_seed()
    shrunk = Shrinker(SCENARIO, seed, {}, budget=60).shrink()
    before: dict[str, Any] = shrunk.original.faults
    after: dict[str, Any] = shrunk.best.faults
    assert sum(c["injected"] for c in before.values()) > 3, before
    assert shrunk.best.fault_count <= 2, after
    assert after.get("operation_crash", {}).get("injected", 0) >= 1, after
