"""Benchmark: how fast a sweep finds each of the kvstore's planted bugs.

For every bug in `examples/kvstore/bugs.py`, sweep its planted-bug scenario
(`scenarios:bug_<name>`: the scenario in `bugs.HUNTED_BY`, bug switched on)
from several starting seeds, each sweep stopping
at its first failure or after `--limit` seeds. One table: per bug, the
median number of seeds run until the first failure and the median wall time
to it, and the failure's kind. A bug never found within the limit is shown as
such; the issue's bar is 500 seeds.

    PYTHONHASHSEED=0 python bench/bugs.py [--starts 3] [--limit 500] [--bug NAME]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.kvstore import bugs, scenarios

STRIDE = 100_000  # starting seeds far apart: independent sweeps


def hunt(bug: str, first: int, limit: int) -> tuple[int | None, float, str]:
    """(seeds run until the first failure or None, wall seconds, failure kind)."""
    scenario = scenarios.BUG_SCENARIOS[bug]
    started = time.perf_counter()
    for count, seed in enumerate(range(first, first + limit), start=1):
        _, error = scenario.execute(seed)
        if error is not None:
            kind = f"{type(error).__name__}: {str(error).splitlines()[0][:60]}"
            return count, time.perf_counter() - started, kind
    return None, time.perf_counter() - started, "not found"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3, help="sweeps per bug (median)")
    parser.add_argument("--limit", type=int, default=500, help="seeds per sweep, at most")
    parser.add_argument("--bug", action="append", choices=list(bugs.BUGS), help="only these")
    args = parser.parse_args()
    print("| bug | scenario | seeds to first failure (median) | wall s (median) | found as |")
    print("|---|---|---|---|---|")
    for bug in args.bug or list(bugs.BUGS):
        runs = [hunt(bug, start * STRIDE, args.limit) for start in range(args.starts)]
        found = [run for run in runs if run[0] is not None]
        seeds = statistics.median(run[0] for run in found) if found else None  # type: ignore[misc]
        wall = statistics.median(run[1] for run in runs)
        shown = f"{seeds:g} ({len(found)}/{len(runs)} sweeps)" if seeds else f"> {args.limit}"
        print(
            f"| {bug} | {bugs.HUNTED_BY[bug]} | {shown} | {wall:.1f} | {runs[0][2]} |", flush=True
        )


if __name__ == "__main__":
    main()
