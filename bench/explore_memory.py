"""Benchmark: what a long `seedbed explore` keeps in memory per run.

A search holds its state (features seen, their counts, the corpus, the
failure buckets); nothing of it may grow with every run, or an hour-long
search of a fast target reaches gigabytes (issue 44 saw ~100 KB a run).
This runs one search in this process and reads its memory as it goes, two
ways in two fresh processes: the resident set (RSS, what the machine pays)
and the Python heap as `tracemalloc` counts it (what the search's objects
hold, without the allocator's slack), neither after an extra `gc.collect()`:
garbage the search leaves for the collector counts. Growth per run is the
least-squares slope from run `--from` (past the first finds and warm caches)
to the last, and the 10,000-run figure is the peak plus that growth for the
runs still to come (or measured, with `--runs 10000`).

The default target, `wide` below, is small and fast and reaches many
features in every run (1,000 coverage points, each in one of 4 buckets): a
run's line in the log is long, so whatever keeps lines (as the search once
did) shows at once. `--target examples.rare:lag` measures a planted-bug
scenario instead. It reports; it never gates (the target is at most
20 KB a run over 1,500 runs).

    PYTHONHASHSEED=0 uv run python bench/explore_memory.py [--runs 1500] [--target T]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import seedbed

POINTS = 1000  # coverage points a run of `wide` reaches
HERE = Path(__file__).resolve()
WIDE = f"{HERE}:wide"


async def wide() -> None:
    """1,000 coverage points, a bucket of 4 each: 4,000 features, all found in a few runs."""
    for point in range(POINTS):
        seedbed.coverage(f"point {point}", random.randrange(4))
        if point % 100 == 0:
            await asyncio.sleep(0.001)
    seedbed.sometimes(random.random() < 0.01, "a rare draw")


def _rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def measure(target: str, runs: int, mode: str, marks: list[int]) -> dict[str, object]:
    """Run one search of `runs` runs here; memory (MB) at each mark, in `mode`."""
    from seedbed._harness.search import ExploreSpec, explore

    seen: dict[int, float] = {}

    def on_line(line: dict[str, object]) -> None:
        done = int(line["index"]) + 1  # type: ignore[call-overload]
        if done in marks:  # no gc.collect(): what the search itself leaves uncollected counts
            seen[done] = tracemalloc.get_traced_memory()[0] / 1e6 if mode == "traced" else _rss_mb()

    if mode == "traced":
        tracemalloc.start()
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="seedbed-explore-memory-") as folder:
        search = explore(ExploreSpec(target, Path(folder) / "out", seed=0, runs=runs), on_line)
    return {"mb": seen, "cpu": time.process_time() - started, "corpus": len(search.state.corpus),
            "features": len(search.state.seen)}  # fmt: skip


def _child(target: str, runs: int, mode: str, marks: list[int]) -> dict[str, object]:
    """`measure` in a fresh interpreter, so one way's memory does not count in the other."""
    call = f"m.measure({target!r}, {runs}, {mode!r}, {marks!r})"
    code = (f"import json, sys; sys.path.insert(0, {str(HERE.parent)!r}); "
            f"import explore_memory as m; print(json.dumps({call}))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONHASHSEED": "0"})  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    result["mb"] = {int(k): v for k, v in result["mb"].items()}  # type: ignore[attr-defined]
    return result


def slope(points: list[tuple[int, float]]) -> float:
    """MB per run, least squares: garbage waits for the collector between runs
    (`seedbed.aio._collect`), so memory saws up and down; two points would
    measure the saw, a fit through all measures the trend."""
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=WIDE)
    parser.add_argument("--runs", type=int, default=1500)
    parser.add_argument("--from", dest="start", type=int, default=500,
                        help="the run growth is measured from")  # fmt: skip
    args = parser.parse_args()
    step = max(1, args.runs // 60)  # many points: a fit over several saws of the collector
    marks = sorted({args.start, *range(step, args.runs + 1, step), args.runs})
    shown_marks = sorted({args.start, *marks[9::10], args.runs})
    name = "bench/explore_memory.py:wide" if args.target == WIDE else args.target
    print(f"explore {name}, {args.runs:,} runs (growth from run {args.start:,})")
    for mode, what in (("rss", "resident set"), ("traced", "Python heap (tracemalloc)")):
        result = _child(args.target, args.runs, mode, marks)
        mb: dict[int, float] = result["mb"]  # type: ignore[assignment]
        per_run_kb = slope([(run, mb[run]) for run in marks if run >= args.start]) * 1000
        peak = max(mb.values())
        at_10k = peak + max(0.0, per_run_kb) * (10_000 - args.runs) / 1000
        shown = ", ".join(f"{run:,}: {mb[run]:.1f}" for run in shown_marks)
        print(f"  {what}: MB at run {shown}")
        print(f"    growth {per_run_kb:.2f} KB per run; peak {peak:.1f} MB; 10,000 runs: "
              f"{at_10k:.1f} MB{' (measured)' if args.runs >= 10_000 else ' (projected)'}; "
              f"{result['features']} features, corpus {result['corpus']}, "
              f"{result['cpu']:.0f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
