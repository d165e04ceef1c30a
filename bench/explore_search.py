"""Runs (and CPU) to the first failure: `seedbed explore` against a plain sweep.

On the planted bugs of `examples.rare` (each needs a rare state, then a
crash) and the counter example (an easy bug, for the "no more than 1.5x
slower" side), it counts the runs each approach makes until one fails:

- sweep: seeds first, first+1, ... as `seedbed sweep` runs them (no choice
  recording), from five starting points (0, 10**6, 2*10**6, ...);
- explore: `seedbed explore --stop-on-failure`, explorer seeds 0..4, in
  this process (a --jobs pool gives the same runs).

It reports the median of each over five tries, the CPU seconds (process
time) each spent, and the ratio explore/sweep of both. A try that finds
nothing within the cap counts as the cap (and is marked).

    uv run python bench/explore_search.py             # every target
    uv run python bench/explore_search.py lag retries # some
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.shrink._trial import asyncio_log_off
from seedbed._harness.targets import resolve, run_target

TARGETS = {
    "lag": "examples.rare:lag",
    "handshake": "examples.rare:handshake",
    "snapshot": "examples.rare:snapshot",
    "retries": "examples.rare:retries",
    "counter (easy)": "examples.counter:counter",
}
TRIES = 5
CAP = 4000  # runs


def sweep_to_failure(target: str, first: int) -> tuple[int, float]:
    """Runs until the first failing seed from `first` (CAP if none), and CPU seconds."""
    obj = resolve(target)
    started = time.process_time()
    with asyncio_log_off():
        for n in range(CAP):
            if run_target(obj, first + n, last_events=False).error is not None:
                return n + 1, time.process_time() - started
    return CAP, time.process_time() - started


def explore_to_failure(target: str, seed: int) -> tuple[int, float]:
    """Runs until the explorer's first failing run (CAP if none), and CPU seconds."""
    with tempfile.TemporaryDirectory(prefix="seedbed-bench-") as folder:
        spec = ExploreSpec(target, Path(folder), seed=seed, runs=CAP, stop_on_failure=True)
        started = time.process_time()
        search = explore(spec)
        spent = time.process_time() - started
    first = search.state.first_failure
    return (CAP if first is None else first + 1), spent


def main(names: list[str]) -> None:
    warnings.simplefilter("ignore", RuntimeWarning)
    print(f"runs to the first failure, median of {TRIES} (cap {CAP}); CPU seconds")
    print(f"{'target':16} {'sweep':>7} {'explore':>8} {'runs x':>7} {'cpu sweep':>10} "
          f"{'cpu explore':>12} {'cpu x':>6}")  # fmt: skip
    for name in names:
        target = TARGETS[name]
        sweeps = [sweep_to_failure(target, k * 1_000_000) for k in range(TRIES)]
        explores = [explore_to_failure(target, k) for k in range(TRIES)]
        runs_s = statistics.median(r for r, _ in sweeps)
        runs_e = statistics.median(r for r, _ in explores)
        cpu_s = statistics.median(c for _, c in sweeps)
        cpu_e = statistics.median(c for _, c in explores)
        print(f"{name:16} {runs_s:>7g} {runs_e:>8g} {runs_e / runs_s:>7.2f} {cpu_s:>10.2f} "
              f"{cpu_e:>12.2f} {cpu_e / cpu_s:>6.2f}")  # fmt: skip
        print(f"{'':16} sweep tries {[r for r, _ in sweeps]}, explore tries "
              f"{[r for r, _ in explores]}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:] or list(TARGETS))
