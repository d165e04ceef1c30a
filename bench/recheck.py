"""What a sweep's self-check costs (issue 41): CPU seconds with and without it.

Runs `seedbed sweep TARGET --seeds N --jobs J` with the default recheck (1 seed
in 20 run again in its worker) and with `--recheck 0`, alternating, for a few
rounds, and prints each side's CPU seconds (the sweep and its workers, from
the OS's accounting of waited-for children) and the ratio. CPU, not wall
time: other load on a shared machine stretches wall time much more.

    PYTHONHASHSEED=0 python bench/recheck.py [--target examples.kvstore.scenarios:swarm]
        [--seeds 200] [--jobs 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path


def _sweep(target: str, seeds: int, jobs: int, recheck: int, out: Path) -> tuple[float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "sweep", target, "--seeds", str(seeds), "--jobs",
         str(jobs), "--recheck", str(recheck), "--out", str(out), "--fresh", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="examples.kvstore.scenarios:swarm")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    totals = {20: 0.0, 0: 0.0}
    rechecked = 0
    with tempfile.TemporaryDirectory(prefix="seedbed-recheck-bench-") as folder:
        for _ in range(args.rounds):
            for share in (20, 0):
                cpu, summary = _sweep(args.target, args.seeds, args.jobs, share,
                                      Path(folder) / str(share))  # fmt: skip
                totals[share] += cpu
                rechecked += summary.get("rechecked", 0) if share else 0
    runs = args.rounds * args.seeds
    print(f"{args.target}, {args.seeds} seeds x {args.rounds} rounds, --jobs {args.jobs}:")
    print("| recheck | CPU seconds | per seed |\n|---|---|---|")
    for share, label in ((0, "--recheck 0"), (20, "default (1 in 20)")):
        print(f"| {label} | {totals[share]:.1f} | {1000 * totals[share] / runs:.1f} ms |")
    print(
        f"rechecked {rechecked / args.rounds:.0f} seeds per sweep; "
        f"CPU ratio {totals[20] / totals[0]:.3f} (+{100 * (totals[20] / totals[0] - 1):.1f}%)"
    )


if __name__ == "__main__":
    main()
