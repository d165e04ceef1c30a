"""Benchmark of seedbed's event loop against the default asyncio loop.

Measured, each as a rate of work per second of wall time:

- ``chain-1``: callbacks/s of one ``call_soon`` chain (each callback schedules
  the next with ``loop.call_soon``) of N callbacks;
- ``chain-100``: callbacks/s of 100 such chains side by side, N in total;
- ``sleep0``: task steps/s of 1,000 tasks each awaiting ``asyncio.sleep(0)``
  100 times;
- ``sleepx``: task steps/s of 1,000 tasks each awaiting ``asyncio.sleep(x)``
  100 times, x in 1..50 ms from a fixed formula. On virtual time it is
  CPU-bound, while the default loop would mostly wait real seconds: its
  baseline is a minimal virtual-time loop (``bench/_minimal_loop.py``: a
  heap, a ready queue and stock asyncio handles, none of seedbed's features).

A task step is one resumption after a sleep, so a task of 100 sleeps counts
100 steps (its first step, up to the first sleep, is not counted).

One process per measurement: each run happens in a fresh interpreter
(``python bench/loop.py --one WORKLOAD LOOP``) that prints one number. So no
run inherits a warm heap, a grown free list, caches or garbage from an earlier
one, and runs of the two loops cannot disturb each other. Only the run itself
is timed: not interpreter start-up, imports, loop creation or a first trivial
``run_until_complete`` done on both loops to pay one-off costs (seedbed scans
the loaded modules once per process before its first run). The parent
interleaves the loops (asyncio, seedbed, asyncio, seedbed, ...) across all
workloads so drift in machine load hits both alike, and reports the median and
the spread (min-max) of ``--runs`` runs. It prints the load average at start
and end so noise can be judged. It reports and does not gate: the exit status
is 0 whether or not targets are met.

Wall-clock rates on this machine swing 30-50% between runs and about 2x
between days, so two more views print beside them: the varied-sleep rate
against its absolute target scaled by the stock loop's sleep(0) rate measured
in the same run, and (``--instructions``) instructions per callback or task
step counted by callgrind, which repeat exactly whatever the machine is doing.

    python bench/loop.py [--runs 5] [--quick] [--json]
    python bench/loop.py --instructions
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _callgrind import count_instructions
from _minimal_loop import MinimalLoop

SCRIPT = Path(__file__).resolve()
LOOPS = ("asyncio", "seedbed")
FLOOR = "minimal"  # bench/_minimal_loop.py: measured on the varied sleeps only
PLAIN = "seedbed-plain"  # seedbed with exploration off (`--instructions` only)
ALL_LOOPS = (*LOOPS, FLOOR)
SEED = 1
CHAINS_MANY = 100


@dataclass(frozen=True)
class Size:
    """Workload sizes: callbacks in a chain run, tasks and sleeps per task."""

    callbacks: int
    tasks: int
    sleeps: int


FULL = Size(callbacks=200_000, tasks=1_000, sleeps=100)
QUICK = Size(callbacks=20_000, tasks=100, sleeps=20)


@dataclass(frozen=True)
class Workload:
    """One measured workload and its target (a ratio to asyncio, or an absolute rate)."""

    key: str
    label: str
    unit: str
    on_asyncio: bool
    min_ratio: float | None = None
    min_rate: float | None = None

    def target_text(self) -> str:
        if self.min_ratio is not None:
            return f">= {self.min_ratio:.2f}x"
        assert self.min_rate is not None
        return f">= {self.min_rate:,.0f}/s"


WORKLOADS = (
    Workload("chain-1", "call_soon, 1 chain", "callbacks/s", True, min_ratio=1.15),
    Workload("chain-100", "call_soon, 100 chains", "callbacks/s", True, min_ratio=1.15),
    Workload("sleep0", "tasks x sleep(0)", "task steps/s", True, min_ratio=1.0),
    Workload("sleepx", "tasks x sleep(x), varied x", "task steps/s", False, min_rate=330_000),
)
BY_KEY = {w.key: w for w in WORKLOADS}


# --- the child: one measurement -------------------------------------------------


def make_loop(name: str) -> asyncio.AbstractEventLoop:
    if name == "asyncio":
        return asyncio.new_event_loop()
    if name == FLOOR:
        return MinimalLoop()
    import seedbed  # imported only for seedbed runs: the asyncio runs stay untouched

    if name == PLAIN:  # exploration off: what the defaults' exploration costs
        return seedbed.new_event_loop(seed=SEED, explore_tasks=False, clock_resolution=0)
    return seedbed.new_event_loop(seed=SEED)


def chain_run(loop: asyncio.AbstractEventLoop, callbacks: int, chains: int) -> asyncio.Future[None]:
    """Start `chains` call_soon chains of `callbacks` in all; the future is done at the end."""
    done: asyncio.Future[None] = loop.create_future()
    running = [chains]

    def step(left: int) -> None:
        if left:
            loop.call_soon(step, left - 1)
            return
        running[0] -= 1
        if not running[0]:
            done.set_result(None)

    for _ in range(chains):
        loop.call_soon(step, callbacks // chains - 1)
    return done


def delays(tasks: int, sleeps: int, varied: bool) -> list[list[float]]:
    """Each task's sleeps: 0, or 1..50 ms from a fixed function of task and sleep numbers.

    Computed before the clock starts, so the run times the loop, not this arithmetic.
    """
    if not varied:
        return [[0.0] * sleeps for _ in range(tasks)]
    return [
        [((task * 7919 + sleep * 104_729) % 50 + 1) / 1000 for sleep in range(sleeps)]
        for task in range(tasks)
    ]


async def sleepers(plan: list[list[float]]) -> None:
    async def sleeper(durations: list[float]) -> None:
        for duration in durations:
            await asyncio.sleep(duration)

    await asyncio.gather(*(sleeper(durations) for durations in plan))


def prepare(loop: asyncio.AbstractEventLoop, key: str, size: Size) -> tuple[Any, int]:
    """The awaitable to run and the units of work it does."""
    if key == "chain-1":
        return chain_run(loop, size.callbacks, 1), size.callbacks
    if key == "chain-100":
        return chain_run(loop, size.callbacks, CHAINS_MANY), size.callbacks
    coro: Coroutine[Any, Any, None] = sleepers(delays(size.tasks, size.sleeps, key == "sleepx"))
    return coro, size.tasks * size.sleeps


def measure(key: str, loop_name: str, size: Size) -> float:
    """Work units per second of one run on a fresh loop, timing only the run."""
    loop = make_loop(loop_name)
    try:
        loop.run_until_complete(asyncio.sleep(0))  # one-off costs, paid by both loops
        awaitable, work = prepare(loop, key, size)
        gc.collect()
        start = time.perf_counter()
        loop.run_until_complete(awaitable)
        elapsed = time.perf_counter() - start
    finally:
        loop.close()
    return work / elapsed


# --- the parent: interleaved runs, medians, the table ---------------------------


@dataclass
class Result:
    workload: Workload
    samples: dict[str, list[float]]

    def median(self, loop: str) -> float | None:
        values = self.samples[loop]
        return statistics.median(values) if values else None

    def ratio(self) -> float | None:
        base, ours = self.median("asyncio"), self.median("seedbed")
        return ours / base if base and ours else None

    def met(self) -> bool:
        w = self.workload
        if w.min_ratio is not None:
            ratio = self.ratio()
            return ratio is not None and ratio >= w.min_ratio
        ours = self.median("seedbed")
        return ours is not None and w.min_rate is not None and ours >= w.min_rate


# The stock loop's sleep(0) rate on the machine where the 330,000/s target was
# set (../shared/NOTES-asyncio.md: ~1,170k task steps/s). This machine's own
# rate, measured in the same run, scales that absolute target to its speed.
PLANNING_SLEEP0_RATE = 1_170_000


def scaled_target(results: list[Result]) -> list[str]:
    """The absolute varied-sleep target scaled by this machine's speed, as a second view.

    Wall-clock speed here has swung 2x between days (the stock loop's sleep(0)
    rate), so an absolute rate set elsewhere says more about the machine than
    about the loop. Scaling by the stock loop measured in this run does not.
    """
    by_key = {r.workload.key: r for r in results}
    base = by_key["sleep0"].median("asyncio")
    ours = by_key["sleepx"].median("seedbed")
    target = BY_KEY["sleepx"].min_rate
    if not base or not ours or target is None:
        return []
    scaled = target * base / PLANNING_SLEEP0_RATE
    verdict = "PASS" if ours >= scaled else "MISS"
    return [
        f"machine speed: the stock loop ran sleep(0) at {base:,.0f} steps/s here, "
        f"{PLANNING_SLEEP0_RATE:,} where the {target:,.0f}/s target was set",
        f"varied sleeps against that target scaled to this machine: {ours:,.0f} >= "
        f"{scaled:,.0f}/s: {verdict} ({ours / base:.3f} of the stock sleep(0) rate; "
        f"the target asks {target / PLANNING_SLEEP0_RATE:.3f})",
    ]


def floor_comparison(results: list[Result]) -> list[str]:
    """seedbed's varied-sleep rate against the minimal loop's, measured in the same run."""
    sleepx = next(r for r in results if r.workload.key == "sleepx")
    ours, floor = sleepx.median("seedbed"), sleepx.median(FLOOR)
    if not ours or not floor:
        return []
    return [
        f"a minimal virtual-time loop (bench/_minimal_loop.py) ran the varied sleeps at "
        f"{floor:,.0f} steps/s: seedbed runs {ours / floor:.2f}x of it"
    ]


SETTLE_SECONDS = 0.5  # as in world.py: one measurement must not tax the next


def run_one(key: str, loop_name: str, quick: bool) -> float:
    """One measurement in a fresh interpreter, after a pause for the machine to settle."""
    time.sleep(SETTLE_SECONDS)
    cmd = [sys.executable, str(SCRIPT), "--one", key, loop_name]
    if quick:
        cmd.append("--quick")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"measurement {key} on {loop_name} failed:\n{proc.stderr}")
    return float(proc.stdout.split()[-1])


def collect(runs: int, quick: bool, progress: Callable[[str], None]) -> list[Result]:
    results = [Result(w, {name: [] for name in ALL_LOOPS}) for w in WORKLOADS]
    for run in range(runs):
        progress(f"run {run + 1}/{runs}")
        for result in results:
            for loop_name in ALL_LOOPS:
                if loop_name == "asyncio" and not result.workload.on_asyncio:
                    continue
                if loop_name == FLOOR and result.workload.key != "sleepx":
                    continue
                result.samples[loop_name].append(run_one(result.workload.key, loop_name, quick))
    return results


def rate_cell(result: Result, loop: str) -> tuple[str, str]:
    values = result.samples[loop]
    if not values:
        return "n/a (real time)", ""
    return f"{statistics.median(values):,.0f}", f"{min(values):,.0f}-{max(values):,.0f}"


def table(results: list[Result]) -> list[str]:
    header = (
        "workload",
        "unit",
        "asyncio median",
        "asyncio min-max",
        "seedbed median",
        "seedbed min-max",
        "ratio",
        "target",
        "result",
    )
    rows = [header]
    for r in results:
        ratio = r.ratio()
        rows.append(
            (
                r.workload.label,
                r.workload.unit,
                *rate_cell(r, "asyncio"),
                *rate_cell(r, "seedbed"),
                f"{ratio:.2f}x" if ratio else "-",
                r.workload.target_text(),
                "PASS" if r.met() else "MISS",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def as_json(results: list[Result], meta: dict[str, Any]) -> str:
    entries = [
        {
            "workload": r.workload.key,
            "label": r.workload.label,
            "unit": r.workload.unit,
            "samples": r.samples,
            "median": {name: r.median(name) for name in ALL_LOOPS},
            "ratio": r.ratio(),
            "target": r.workload.target_text(),
            "met": r.met(),
        }
        for r in results
    ]
    return json.dumps({**meta, "results": entries}, indent=2)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(args: argparse.Namespace) -> None:
    size = QUICK if args.quick else FULL
    start_load = loadavg()

    def say(line: str) -> None:  # the table goes to stdout unless stdout carries JSON
        print(line, file=sys.stderr if args.json else sys.stdout)

    say(
        f"python {platform.python_version()}, {os.cpu_count()} cpus, {args.runs} runs each, "
        f"{size.callbacks:,} callbacks, {size.tasks:,} tasks x {size.sleeps} sleeps"
        f"{' (quick)' if args.quick else ''}"
    )
    say(f"load average at start: {start_load}")
    sys.stdout.flush()  # progress goes to stderr; keep the header ahead of it
    results = collect(args.runs, args.quick, lambda line: print(line, file=sys.stderr))
    end_load = loadavg()
    if args.json:
        meta = {
            "python": platform.python_version(),
            "runs": args.runs,
            "quick": args.quick,
            "size": size.__dict__,
            "loadavg_start": start_load,
            "loadavg_end": end_load,
        }
        print(as_json(results, meta))
        return
    print("\n".join(table(results)))
    print("\n".join(floor_comparison(results) + scaled_target(results)))
    print(f"load average at end: {end_load}")
    missed = [r.workload.label for r in results if not r.met()]
    print(f"missed targets: {'; '.join(missed)}" if missed else "all targets met")


# --- instructions: a repeatable view of the same work ------------------------------

# Two sizes whose difference is the measured work: start-up, imports and the
# first run cancel out. Counted by callgrind, so the other core's load and
# the machine's speed of the day do not move the figures.
INSTRUCTION_SIZES = (Size(callbacks=2_000, tasks=1_000, sleeps=1), Size(42_000, 1_000, 21))


def work_units(key: str, size: Size) -> int:
    return size.callbacks if key.startswith("chain") else size.tasks * size.sleeps


def instructions_per_unit(key: str, loop_name: str) -> float:
    def count(size: Size) -> int:
        sizes = f"{size.callbacks},{size.tasks},{size.sleeps}"
        return count_instructions([str(SCRIPT), "--one", key, loop_name, "--size", sizes])

    small, big = INSTRUCTION_SIZES
    return (count(big) - count(small)) / (work_units(key, big) - work_units(key, small))


def report_instructions() -> None:
    """Instructions per callback or task step: seedbed against its baseline, and the ratio.

    The baseline is the default asyncio loop, or for the varied sleeps (which
    the default loop would spend waiting) the minimal virtual-time loop.
    """
    print(f"python {platform.python_version()}, instructions per unit (callgrind)")
    rows = [("workload", "unit", "baseline", "baseline", "seedbed", "ratio", "target",
             "exploration off", "defaults cost")]  # fmt: skip
    for w in WORKLOADS:
        print(f"counting {w.key}", file=sys.stderr)
        baseline = "asyncio" if w.on_asyncio else FLOOR
        base = instructions_per_unit(w.key, baseline)
        ours = instructions_per_unit(w.key, "seedbed")
        plain = instructions_per_unit(w.key, PLAIN)
        target = w.target_text() if w.on_asyncio else "-"
        rows.append((w.label, f"instructions/{w.unit.split('/')[0].rstrip('s')}", baseline,
                     f"{base:,.0f}", f"{ours:,.0f}", f"{base / ours:.2f}x", target,
                     f"{plain:,.0f}", f"{ours / plain - 1:+.1%}"))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def parse_size(text: str) -> Size:
    callbacks, tasks, sleeps = (int(part) for part in text.split(","))
    return Size(callbacks, tasks, sleeps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per workload and loop")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument(
        "--one",
        nargs=2,
        metavar=("WORKLOAD", "LOOP"),
        help="internal: one measurement in this process; prints the rate",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per unit under callgrind instead of timing (repeatable)",
    )
    parser.add_argument("--size", help="internal: CALLBACKS,TASKS,SLEEPS for --one")
    args = parser.parse_args(argv)
    if args.one:
        key, loop_name = args.one
        if key not in BY_KEY or loop_name not in (*ALL_LOOPS, PLAIN):
            parser.error(f"--one wants one of {sorted(BY_KEY)} and one of {(*ALL_LOOPS, PLAIN)}")
        size = parse_size(args.size) if args.size else QUICK if args.quick else FULL
        print(measure(key, loop_name, size))
        return 0
    if args.instructions:
        report_instructions()
        return 0
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    report(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
