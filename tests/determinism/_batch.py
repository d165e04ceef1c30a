"""Run many seeds of the determinism programs in this process; print one JSON line.

    python tests/determinism/_batch.py PAD SEEDS [TRACE_DIR]

PAD shifts this process's heap before the runs (see `seedbed._harness.selfcheck`), so an order
set by memory addresses shows up as a difference between processes. With
TRACE_DIR, seed 0 of each program also writes its trace there. The simulations
(`det_programs.SIMULATIONS`) run their first `SIMULATION_SEEDS` seeds where
aiohttp is installed (the tier's own interpreter; not the bare ones of the
cross-version test, which compares the programs only).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import det_programs

import seedbed
from seedbed.aio._digest import result_digest

PROGRAMS = ("as_completed_order", "named_workers", "gc_finalizers", "mixed")
SIMULATION_SEEDS = 8  # per simulation: a world costs ~30x a program's run


def main() -> None:
    pad, seeds = int(sys.argv[1]), int(sys.argv[2])
    trace_dir = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    padding = [bytes(size) for size in range(0, 520, 8) for _ in range(pad * 3)][::2]
    results = {}
    for name in PROGRAMS:
        program = getattr(det_programs, name)
        for seed in range(seeds):
            trace = trace_dir / f"{name}.jsonl" if trace_dir is not None and seed == 0 else None
            result = seedbed.run(program, seed=seed, trace=trace)
            results[f"{name}/{seed}"] = [result.trace_hash, result.result_digest]
    simulations = det_programs.SIMULATIONS if det_programs.HAVE_AIOHTTP else {}
    for name, simulate in simulations.items():
        for seed in range(min(seeds, SIMULATION_SEEDS)):
            trace_hash, values = simulate(seed)
            results[f"{name}/{seed}"] = [trace_hash, result_digest(values)]
    print(json.dumps({"python": sys.version.split()[0], "results": results}))
    del padding


if __name__ == "__main__":
    main()
