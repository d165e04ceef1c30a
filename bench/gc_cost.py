"""What collecting garbage at fixed steps costs a sleep step, in instructions.

Inside a run automatic collection is off and the run's own objects are
collected every `_collect.REFILLS` x 256 steps (`seedbed.aio._collect`). This
counts, under callgrind, 400 tasks sleeping 20 times each (a heap of 100,000
live objects is built first, as a test process has one), per sleep step, for:
no collection at all, CPython's automatic collection (what seedbed did
before), and the fixed-step policy at several intervals.

    python bench/gc_cost.py          # needs valgrind
"""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _callgrind import count_instructions

TASKS, SLEEPS, HEAP = 400, 20, 100_000
POLICIES = ("none", "automatic", "1", "4", "16")


def workload(policy: str, sleeps: int) -> None:
    from seedbed.aio import _collect
    from seedbed.aio.loop import SeedbedLoop

    heap = [[index] for index in range(HEAP)]  # tracked objects, alive throughout
    if policy in ("none", "automatic"):
        _collect.collect_at = lambda refills: None
        _collect.Stretch.collect = lambda self: None  # type: ignore[method-assign]
        if policy == "automatic":
            _collect.gc.disable = lambda: None  # type: ignore[attr-defined]
            _collect.gc.freeze = lambda: None  # type: ignore[attr-defined]
        else:
            gc.disable()
    else:
        _collect.REFILLS = int(policy)
    loop = SeedbedLoop(1)

    async def sleeper(index: int) -> None:
        for sleep in range(sleeps):
            await asyncio.sleep(((index * 7919 + sleep * 104_729) % 50 + 1) / 1000)

    async def main() -> None:
        await asyncio.gather(*(sleeper(index) for index in range(TASKS)))

    loop.run_until_complete(main())
    del heap


def per_step(policy: str, empty: int) -> float:
    """`empty` is a run without sleeps: start-up and the heap, the same for every policy."""
    full = count_instructions([__file__, "--child", policy, str(SLEEPS)])
    return (full - empty) / (TASKS * SLEEPS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        workload(sys.argv[2], int(sys.argv[3]))
    else:
        empty = count_instructions([__file__, "--child", "none", "0"])
        base = per_step("none", empty)
        print(f"instructions per sleep step with no collection: {base:,.0f}")
        for policy in POLICIES[1:]:
            cost = per_step(policy, empty)
            label = policy if policy == "automatic" else f"every {int(policy) * 256} steps"
            print(f"  {label:>18}: {cost:,.0f} ({cost / base - 1:+.1%})")
