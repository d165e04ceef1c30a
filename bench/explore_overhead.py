"""What coverage collection costs a run, in callgrind instructions.

`seedbed explore` reads a run's features from its assertion catalog, its
fault counts, the `seedbed.coverage` points and extremes, and (for buggify
sites and failpoints) the choices it records to replay the run anyway. This
counts the instructions of N runs of a target in four modes, less the same
process with no run (imports, target resolution), per run:

- plain:     `run_target`, as a sweep runs a seed;
- coverage:  the same, collecting the hooks and reading the features;
- recorded:  the same under a recording choice session (what `seedbed
             shrink` and the explorer need to replay a run), no features;
- explore:   one fresh run of the explorer: recording and features;
- branches:  the same with `--branches PACKAGE` (3.12+ only: sys.monitoring),
             PACKAGE the target's own module unless given.

    uv run python bench/explore_overhead.py [TARGET] [RUNS] [PACKAGE]
    UV_PROJECT_ENVIRONMENT=.venv-3.12 uv run --python python3.12 \
        python bench/explore_overhead.py examples.rare:lag 3 seedbed
"""

from __future__ import annotations

import sys
import warnings

sys.path.insert(0, "bench")

from _callgrind import count_instructions

MODES = ("none", "plain", "coverage", "recorded", "explore")
BRANCHES = ("branches",) if sys.version_info >= (3, 12) else ()


def _child(mode: str, target: str, runs: int, package: str) -> None:
    warnings.simplefilter("ignore")
    from seedbed._core import choices
    from seedbed._harness.search._execute import execute
    from seedbed._harness.search._features import collecting, coverage_of
    from seedbed._harness.search._plan import Plan
    from seedbed._harness.targets import resolve, run_target

    obj = resolve(target)
    for seed in range(runs if mode != "none" else 0):
        if mode == "plain":
            run_target(obj, seed, last_events=False)
        elif mode == "coverage":
            with collecting() as hooks:
                outcome = run_target(obj, seed, last_events=False)
            coverage_of(hooks, [], outcome.faults)
        elif mode == "recorded":
            with choices.session():
                run_target(obj, seed, last_events=False)
        elif mode == "explore":
            execute(obj, Plan(seed, seed, "fresh"), None, {})
        else:
            execute(obj, Plan(seed, seed, "fresh"), None, {}, branches=(package,))


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else "examples.rare:lag"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    package = sys.argv[3] if len(sys.argv) > 3 else target.split(":")[0]
    counts = {mode: count_instructions([__file__, "--child", mode, target, str(runs), package])
              for mode in (*MODES, *BRANCHES)}  # fmt: skip
    base = counts["none"]
    plain = (counts["plain"] - base) / runs
    print(f"{target}: {runs} runs, instructions per run (imports subtracted)")
    if BRANCHES:
        print(f"  (branches: of {package})")
    for mode in (*MODES[1:], *BRANCHES):
        per_run = (counts[mode] - base) / runs
        print(f"  {mode:9} {per_run:>14,.0f}  {100 * (per_run / plain - 1):+6.2f}% vs plain")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        main()
