"""Benchmark: what task-order exploration and coarse clocks cost, off and on.

Two workloads, each run with the options off, with `explore_tasks=True` and
with `clock_resolution=0.001`:

- tasks: ten tasks looping on `await asyncio.sleep(0)` (every iteration is a
  batch of ten task steps: exploration's worst case, a draw per iteration);
- timers: ten tasks looping on `await asyncio.sleep(0.001)` (timers, the
  coarse clock's path).

It prints CPU time per loop step (medians, `time.process_time`, alternating
variants in one process) as ratios against "off"; with `--instructions`,
callgrind's instruction counts for each variant in a fresh process, the
repeatable view. Comparing "off" against the commit before these options
(run this file's `--variant off` under callgrind in both trees) shows what
they cost when unused.

    PYTHONHASHSEED=0 python bench/explore.py [--runs 5] [--instructions]
    PYTHONHASHSEED=0 python bench/explore.py --variant off --workload tasks

It reports; it never gates.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

import seedbed

VARIANTS: dict[str, dict[str, Any]] = {
    "off": {},
    "explore_tasks": {"explore_tasks": True},
    "clock_resolution": {"clock_resolution": 0.001},
}
ROUNDS = 3000


async def spin(delay: float) -> None:
    async def one() -> None:
        for _ in range(ROUNDS):
            await asyncio.sleep(delay)

    await asyncio.gather(*(one() for _ in range(10)))


WORKLOADS = {"tasks": 0.0, "timers": 0.001}


def run_once(workload: str, variant: str) -> tuple[float, int]:
    """CPU seconds and loop steps of one run."""
    delay = WORKLOADS[workload]
    start = time.process_time()
    result = seedbed.run(lambda: spin(delay), seed=1, **VARIANTS[variant])
    return time.process_time() - start, result.steps


def cpu_table(runs: int) -> None:
    for workload in WORKLOADS:
        per_step: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        for _ in range(runs):
            for variant in VARIANTS:
                seconds, steps = run_once(workload, variant)
                per_step[variant].append(seconds / steps)
        base = statistics.median(per_step["off"])
        for variant in VARIANTS:
            median = statistics.median(per_step[variant])
            print(
                f"{workload:7} {variant:17} {median * 1e9:8.0f} ns/step  {median / base:5.2f}x off"
            )


def instruction_table() -> None:
    sys.path.insert(0, "bench")
    from _callgrind import count_instructions

    for workload in WORKLOADS:
        counts = {
            variant: count_instructions([__file__, "--variant", variant, "--workload", workload])
            for variant in VARIANTS
        }
        for variant, count in counts.items():
            print(
                f"{workload:7} {variant:17} {count:>14,} instructions  "
                f"{count / counts['off']:5.3f}x off"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--variant", choices=sorted(VARIANTS))
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="tasks")
    args = parser.parse_args()
    if args.variant:  # one run, for callgrind
        run_once(args.workload, args.variant)
    elif args.instructions:
        instruction_table()
    else:
        cpu_table(args.runs)


if __name__ == "__main__":
    main()
