"""Runs (and CPU) to the first failure: `seedbed explore` against a plain sweep.

On the planted bugs of `examples.rare` (each needs a rare state, then a
crash), `examples.heartbeat` (a rare state the network makes, which a crash
of the wrong node undoes) and the counter example (an easy bug, for the "no
more than 1.5x slower" side), it counts the runs each approach makes until
one fails:

- sweep: seeds 0, 1, 2, ... as `seedbed sweep` runs them (no choice
  recording); each try is the run from one failure (or seed 0) to the next,
  up to `SWEEP_TRIES` of them: a sweep's runs to a failure are geometric,
  and fifteen gaps of one long sweep estimate their median better than
  five sweeps would, for the same CPU;
- explore: `seedbed explore --stop-on-failure`, explorer seeds 0..4, in
  this process (a --jobs pool gives the same runs).

It reports the median of each (the sweep's CPU is its median gap times its
CPU per run), and the ratio explore/sweep of both. A try that finds nothing
within the cap counts as the cap.

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
    "heartbeat": "examples.heartbeat:heartbeat",
    "counter (easy)": "examples.counter:counter",
}
TRIES = 5
SWEEP_TRIES = 15
CAP = 4000  # runs
SWEEP_CAP = 8000  # runs of the one long sweep


def sweep_gaps(target: str) -> tuple[list[int], float]:
    """Runs from one failing seed to the next (the first from seed 0), and CPU per run."""
    obj = resolve(target)
    gaps: list[int] = []
    last = -1
    started = time.process_time()
    with asyncio_log_off():
        for seed in range(SWEEP_CAP):
            if run_target(obj, seed, last_events=False).error is not None:
                gaps.append(seed - last)
                last = seed
                if len(gaps) == SWEEP_TRIES:
                    break
    ran = last + 1 if len(gaps) == SWEEP_TRIES else SWEEP_CAP
    return gaps or [SWEEP_CAP], (time.process_time() - started) / ran


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
    print(
        f"runs to the first failure, median of {SWEEP_TRIES} sweep gaps and {TRIES} "
        f"explorer seeds (cap {CAP}); CPU seconds"
    )
    print(f"{'target':16} {'sweep':>7} {'explore':>8} {'runs x':>7} {'cpu sweep':>10} "
          f"{'cpu explore':>12} {'cpu x':>6}")  # fmt: skip
    for name in names:
        target = TARGETS[name]
        gaps, per_run = sweep_gaps(target)
        explores = [explore_to_failure(target, k) for k in range(TRIES)]
        runs_s = statistics.median(gaps)
        runs_e = statistics.median(r for r, _ in explores)
        cpu_s = runs_s * per_run
        cpu_e = statistics.median(c for _, c in explores)
        print(f"{name:16} {runs_s:>7g} {runs_e:>8g} {runs_e / runs_s:>7.2f} {cpu_s:>10.2f} "
              f"{cpu_e:>12.2f} {cpu_e / cpu_s:>6.2f}")  # fmt: skip
        print(f"{'':16} sweep gaps {gaps}, explore tries {[r for r, _ in explores]}",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:] or list(TARGETS))
