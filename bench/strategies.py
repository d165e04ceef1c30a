"""Benchmark: how many runs each exploration strategy needs to find planted bugs.

For every planted bug (the examples, tests/quality's planted bugs, the
planted-bug tier's systems in tests/quality/planted, and examples/orders.py)
and every strategy, it runs seeds from the start of
each of several seed windows until the first failure (at most `--cap` runs)
and prints the runs to first failure: the median and the max over the
windows ("-" where a window found nothing within the cap, and the median
then counts it as the cap plus one). One run, one table: strategies side
by side on the same bugs and the same seeds.

"defaults" is what a user gets with no option at all (the tier's
`planted._defaults.DEFAULTS`, which is `{}` once exploration is on by
default); every other column spells out each setting it depends on, the
loop's exploration off unless named and the exponential latency model, so
it means the same whatever the defaults are.

    PYTHONHASHSEED=0 python bench/strategies.py [--windows 5] [--cap 200] [--quick] [--only TEXT]
        [--strategy defaults ...]

It reports; it never gates.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples import counter, orders, race
from tests.quality import planted
from tests.quality.planted import _defaults

import seedbed
from seedbed import NetworkConfig, Simulation

# Seedbed 0.x's defaults, spelled out: no task-order exploration, an exact
# clock, the exponential latency model.
BEFORE: dict[str, Any] = {"explore_tasks": False, "clock_resolution": 0.0,
                          "network": NetworkConfig(latency_model="exponential")}  # fmt: skip
PCT: dict[str, Any] = {"strategy": "pct", "pct_steps": 100, "explore_tasks": True}
STRATEGIES: dict[str, dict[str, Any]] = {
    "defaults": _defaults.DEFAULTS,
    "random": BEFORE,
    "random+tasks": {**BEFORE, "explore_tasks": True},
    "random+clock": {**BEFORE, "clock_resolution": 0.001},
    "pct d=2+tasks": {**BEFORE, **PCT, "pct_depth": 2},
    "pct d=3+tasks": {**BEFORE, **PCT, "pct_depth": 3},
    "pct drawn+tasks": {**BEFORE, "strategy": "pct", "explore_tasks": True},
    "pos+tasks": {**BEFORE, "strategy": "pos", "explore_tasks": True},
    "defaults+pos": {**_defaults.DEFAULTS, "strategy": "pos"},
    "defaults+pct": {**_defaults.DEFAULTS, "strategy": "pct"},
}


async def timer_tie_lost_update() -> int:
    """tests/quality: two increments woken at one instant, a reader between."""
    value = {"n": 0}

    async def increment() -> None:
        await asyncio.sleep(1.0)
        seen = value["n"]
        await asyncio.sleep(0)
        value["n"] = seen + 1

    async def reader() -> None:
        await asyncio.sleep(1.0)
        assert value["n"] in (0, 2), f"observed a half-done update: {value}"

    await asyncio.gather(increment(), increment(), reader())
    assert value["n"] == 2, f"lost update: {value['n']}"
    return value["n"]


async def checkpoint_race() -> None:
    """tests/quality: a check-then-act race at explicit checkpoints."""
    seats = {"free": 1}
    booked: list[str] = []

    async def book(who: str) -> None:
        await seedbed.checkpoint(f"{who} arrives")
        if seats["free"] > 0:
            await seedbed.checkpoint(f"{who} between check and act")
            seats["free"] -= 1
            booked.append(who)

    await asyncio.gather(book("ann"), book("bob"))
    assert len(booked) <= 1, f"double booking: {booked}"


def program(main: Callable[[], Any], **fixed: Any) -> Callable[[int, dict[str, Any]], bool]:
    def fails(seed: int, options: dict[str, Any]) -> bool:
        loop = {key: value for key, value in options.items() if key != "network"}
        try:
            seedbed.run(main, seed=seed, max_steps=1_000_000, **fixed, **loop)
        except AssertionError:
            return True
        return False

    return fails


def world(setup: Callable[[Simulation], None]) -> Callable[[int, dict[str, Any]], bool]:
    def fails(seed: int, options: dict[str, Any]) -> bool:
        sim = Simulation(seed=seed, **options)
        setup(sim)
        try:
            sim.run(max_time=60)
        except (AssertionError, seedbed.InvariantViolation):
            return True
        return False

    return fails


def scenario_fails(seed: int, options: dict[str, Any]) -> bool:
    return counter.counter.execute(seed, overrides=options)[1] is not None


def tier(run: planted.Run) -> Callable[[int, dict[str, Any]], bool]:
    """A planted-bug tier system's buggy variant, run with `options` instead of the tier's."""

    def fails(seed: int, options: dict[str, Any]) -> bool:
        _defaults.OVERRIDE = options
        try:
            return run(seed, True) is not None
        finally:
            _defaults.OVERRIDE = None

    return fails


BUGS: dict[str, Callable[[int, dict[str, Any]], bool]] = {
    "examples.race": program(race.main),
    "quality: timer-tie lost update": program(
        timer_tie_lost_update, cpu_cost_min=0.0, cpu_cost_max=0.0
    ),
    "quality: checkpoint race": program(checkpoint_race),
    "orders: 3 tasks, sleep(0)": program(orders.lost_update),
    "orders: timer tie": program(orders.timer_tie),
    "orders: depth-2 node order": world(orders.depth_two_world),
    "examples.counter (scenario)": scenario_fails,
    **{f"tier: {name}": tier(run) for name, (_, run) in planted.SYSTEMS.items()},
}


def runs_to_failure(fails: Callable[[int, dict[str, Any]], bool], start: int, cap: int,
                    options: dict[str, Any]) -> int | None:  # fmt: skip
    for n in range(cap):
        if fails(start + n, options):
            return n + 1
    return None


def cell(found: list[int | None], cap: int) -> str:
    counted = [n if n is not None else cap + 1 for n in found]
    median = statistics.median(counted)
    worst = "-" if None in found else str(max(counted))
    shown = ">cap" if median > cap else f"{median:g}"
    return f"{shown}/{worst}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=5, help="seed windows per bug")
    parser.add_argument("--cap", type=int, default=200, help="most runs per window")
    parser.add_argument("--quick", action="store_true", help="3 windows, cap 50, no scenario")
    parser.add_argument("--only", default="", help="only the bugs whose name contains this")
    parser.add_argument("--strategy", action="append", choices=list(STRATEGIES),
                        help="only this column (repeat for more); all by default")  # fmt: skip
    args = parser.parse_args()
    strategies = {name: STRATEGIES[name] for name in args.strategy or STRATEGIES}
    windows, cap = (3, 50) if args.quick else (args.windows, args.cap)
    bugs = {
        k: v for k, v in BUGS.items() if not (args.quick and "scenario" in k) and args.only in k
    }
    print(f"runs to first failure, median/max over {windows} windows of up to {cap} seeds")
    width = max(len(name) for name in bugs)
    print(" " * width + "".join(f"{name:>16}" for name in strategies))
    for bug, fails in bugs.items():
        row = []
        for options in strategies.values():
            found = [runs_to_failure(fails, w * 10_000, cap, options) for w in range(windows)]
            row.append(cell(found, cap))
        print(f"{bug:{width}}" + "".join(f"{text:>16}" for text in row), flush=True)


if __name__ == "__main__":
    main()
