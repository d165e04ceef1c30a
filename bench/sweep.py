"""Benchmark: a sweep's seeds per second with one and two workers, locally and on Dask.

One run measures, interleaved over several rounds, for a fixed small scenario
(`_sweep_scenario.py`: three servers, two clients, crashes):

- the baseline: `scenario.run(seed)` in a loop in this process;
- the worker pool with 1 and with 2 workers, each seed's record appended to
  a results file as `seedbed sweep` does, after the workers have started
  (their start-up, the interpreter and the imports, is reported apart);
- a 2-worker Dask `LocalCluster` (`--scheduler local:2`), when `distributed`
  is installed, started once (its start-up reported apart) and warmed up;
- the per-seed overhead of the pool: its time per seed with one worker minus
  the baseline's; and of each 2-worker backend: two workers' time per seed
  (each worker's share of the wall clock) minus the baseline's;
- CPU seconds per seed of each 2-worker backend across all its processes
  (`psutil`, which Dask brings): for `--jobs 2` this thread and its workers,
  for Dask this whole process (client, scheduler, nannies) and every process
  of the cluster; and of that, the CPU outside the seedbed workers that run
  the seeds (what each backend adds). Other load on the machine stretches
  wall-clock figures much more than these.

Targets (issue 10): `--jobs 2` at >= 1.7x `--jobs 1` on a 2-core machine, and
a per-seed overhead under 5 ms; (issue 15) the 2-worker cluster within 15% of
`--jobs 2`'s seeds per second. The load average is printed at the start and
the end: other processes on the machine take cores from the workers, and the
2-worker ratio shows it. It reports; it never gates.

    PYTHONHASHSEED=0 python bench/sweep.py [--seeds 200] [--rounds 3] [--json] [--no-dask]
    PYTHONHASHSEED=0 python bench/sweep.py --versus-dask [--target examples.kvstore.scenarios:swarm]
        [--seeds 16] [--rounds 3] [--dask-processes]

`--versus-dask` runs only `--jobs 2` against Dask `local:2` (issue 30: at
least 0.95x its seeds per second, at most 3 ms of CPU per seed outside the
seeds), rounds interleaved; `--target` sweeps another target (the store's
swarm for issue 30's figure); `--dask-processes` runs `local:2` as a cluster
of worker processes, as before the workers became threads of the sweep.

    PYTHONHASHSEED=0 python bench/sweep.py --tiny [--seeds 300] [--rounds 5] [--instructions]

`--tiny` measures instead what a `Scenario` costs per seed over the bare loop
(issue 30: at most 0.2 ms) on the tiny system of `_tiny.py`, as seeds per CPU
second beside detangle's figure for such a system (0.42 ms per seed), in
interleaved rounds; with `--instructions`, as callgrind instructions per
seed (a process running 3N seeds less one running N, over 2N).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _tiny
from _callgrind import count_instructions
from seedbed._harness.sweeps import _dask
from seedbed._harness.sweeps._dask import DaskPool
from seedbed._harness.sweeps._pool import WorkerPool
from seedbed._harness.sweeps._results import ResultsWriter
from seedbed._harness.targets import resolve, run_seed

SAMPLES = ("loop", "loop_cpu", "start1", "pool1", "pool1_cpu", "pool1_extra", "start2", "pool2",
           "pool2_cpu", "pool2_extra", "dask2", "dask2_cpu", "dask2_extra")  # fmt: skip
TARGET = str(Path(__file__).with_name("_sweep_scenario.py")) + ":scenario"
SETTINGS = {"target": TARGET, "options": {}, "runner": "seedbed"}
SWARM = "examples.kvstore.scenarios:swarm"  # issue 30's Dask figure: the store's swarm sweep


def in_process(seeds: range) -> tuple[float, float]:
    """(wall, CPU) seconds per seed of the swept target run in a loop here, after a warm-up.

    The target `--target` names, run as a worker runs it (`run_seed`), so the
    baseline is the same work as the pools' (it ran the default scenario
    whatever `--target` said)."""
    target = resolve(TARGET)
    run_seed(target, 10**9, SETTINGS["options"])
    started, cpu = time.perf_counter(), time.thread_time()
    for seed in seeds:
        run_seed(target, seed, SETTINGS["options"])
    return (time.perf_counter() - started) / len(seeds), (time.thread_time() - cpu) / len(seeds)


def pooled(seeds: range, jobs: int, folder: Path) -> tuple[float, float, float, float]:
    """(seconds for `jobs` workers to start; then per seed: wall, CPU, CPU outside seeds)."""
    pool = WorkerPool(SETTINGS, jobs, folder / "logs", seed_timeout=300.0)
    writer = ResultsWriter(folder / f"results-{jobs}.jsonl", keep_bytes=None)
    warm_up = [{"seed": 10**9 + i} for i in range(jobs)]  # one per worker: starts them all
    try:
        started = time.perf_counter()
        pool.run(warm_up, writer.append)
        # This thread and the seeds' processes: not the idle Dask cluster's processes.
        ready, before = time.perf_counter(), (_cpu(0.0)[0], time.thread_time())
        pool.run([{"seed": seed} for seed in seeds], writer.append)
        cpu, extra = _less((_cpu(0.0)[0], time.thread_time()), before)  # workers still live
        done = time.perf_counter()
    finally:
        pool.close()
        writer.close()
    return ready - started, (done - ready) / len(seeds), cpu / len(seeds), extra / len(seeds)


def _cpu(here: float) -> tuple[float, float]:
    """(CPU seconds so far of the seedbed workers running seeds, of everything else).

    Everything else: `here` (this process's share) and every other process
    this one started, theirs included (Dask's workers). NaN without psutil.
    """
    try:
        import psutil
    except ImportError:
        return math.nan, math.nan
    seeds, others = 0.0, here
    for child in psutil.Process().children(recursive=True):
        try:
            times, command = child.cpu_times(), child.cmdline()
        except psutil.Error:  # it ended meanwhile
            continue
        if "seedbed._harness.sweeps._worker" in command:
            seeds += times.user + times.system
        else:
            others += times.user + times.system
    return seeds, others


def _less(after: tuple[float, float], before: tuple[float, float]) -> tuple[float, float]:
    """(all CPU seconds, those outside the seedbed workers) between two `_cpu` readings."""
    seeds, others = after[0] - before[0], after[1] - before[1]
    return seeds + others, others


def start_cluster(workers: int) -> tuple[DaskPool, float]:
    """A `local:N` cluster with its seedbed worker processes started, and the seconds it took."""
    started = time.perf_counter()
    cluster = DaskPool(f"local:{workers}", SETTINGS, seed_timeout=300.0)
    cluster.run([{"seed": 10**9 + i} for i in range(4 * workers)], lambda record: None)
    return cluster, time.perf_counter() - started


def on_cluster(seeds: range, cluster: DaskPool, folder: Path) -> tuple[float, float, float]:
    """Per seed on a started cluster (records appended to a file): wall, CPU, CPU outside seeds."""
    writer = ResultsWriter(folder / "results-dask.jsonl", keep_bytes=None)
    try:
        started, before = time.perf_counter(), _cpu(time.process_time())  # the scheduler too
        cluster.run([{"seed": seed} for seed in seeds], writer.append)
        cpu, extra = _less(_cpu(time.process_time()), before)
        return (time.perf_counter() - started) / len(seeds), cpu / len(seeds), extra / len(seeds)
    finally:
        writer.close()


def measure(seeds: int, rounds: int, dask: bool) -> dict[str, Any]:
    seed_range = range(seeds)
    samples: dict[str, list[float]] = {key: [] for key in SAMPLES}
    cluster, cluster_start = start_cluster(2) if dask else (None, 0.0)
    try:
        with tempfile.TemporaryDirectory(prefix="seedbed-bench-sweep-") as name:
            for _ in range(rounds):
                _add(samples, ("loop", "loop_cpu"), in_process(seed_range))
                for jobs in (1, 2):
                    figures = pooled(seed_range, jobs, Path(name))
                    keys = (f"start{jobs}", f"pool{jobs}", f"pool{jobs}_cpu", f"pool{jobs}_extra")
                    _add(samples, keys, figures)
                if cluster is not None:
                    # A fresh run: every seed on the cluster again, none deduplicated away.
                    cluster._seen.clear()
                    figures = on_cluster(seed_range, cluster, Path(name))
                    _add(samples, ("dask2", "dask2_cpu", "dask2_extra"), figures)
    finally:
        if cluster is not None:
            cluster.close()
    median = {key: statistics.median(values) for key, values in samples.items() if values}
    return {**_pool_figures(seeds, rounds, samples, median),
            **_dask_figures(median, cluster_start)}  # fmt: skip


def _add(samples: dict[str, list[float]], keys: tuple[str, ...], values: tuple[float, ...]) -> None:
    for key, value in zip(keys, values, strict=True):
        samples[key].append(value)


def _dask_figures(median: dict[str, float], cluster_start: float) -> dict[str, Any]:
    if "dask2" not in median:
        return {}
    return {
        "dask2_seeds_per_s": 1 / median["dask2"],
        "dask2_over_jobs2": median["pool2"] / median["dask2"],
        "jobs2_overhead_ms_per_seed": (2 * median["pool2"] - median["loop"]) * 1000,
        "dask2_overhead_ms_per_seed": (2 * median["dask2"] - median["loop"]) * 1000,
        "dask2_start_s": cluster_start,
        "jobs2_cpu_ms_per_seed": median["pool2_cpu"] * 1000,
        "dask2_cpu_ms_per_seed": median["dask2_cpu"] * 1000,
        "dask2_cpu_over_jobs2": median["pool2_cpu"] / median["dask2_cpu"],
        "jobs2_extra_cpu_ms_per_seed": median["pool2_extra"] * 1000,
        "dask2_extra_cpu_ms_per_seed": median["dask2_extra"] * 1000,
    }


def _pool_figures(
    seeds: int, rounds: int, samples: dict[str, list[float]], median: dict[str, float]
) -> dict[str, Any]:
    return {
        "seeds": seeds,
        "rounds": rounds,
        "in_process_seeds_per_s": 1 / median["loop"],
        "in_process_cpu_ms_per_seed": median["loop_cpu"] * 1000,
        "jobs1_seeds_per_s": 1 / median["pool1"],
        "jobs2_seeds_per_s": 1 / median["pool2"],
        "jobs2_over_jobs1": median["pool1"] / median["pool2"],
        "overhead_ms_per_seed": (median["pool1"] - median["loop"]) * 1000,
        "worker_start_s": {"jobs1": median["start1"], "jobs2": median["start2"]},
        "spread_jobs2_seeds_per_s": [1 / max(samples["pool2"]), 1 / min(samples["pool2"])],
    }


def versus_dask(seeds: int, rounds: int) -> dict[str, Any]:
    """`--jobs 2` against Dask `local:2` only, rounds interleaved: per seed, medians."""
    seed_range = range(10**6, 10**6 + seeds)  # seeds the warm-ups do not run
    samples: dict[str, list[float]] = {key: [] for key in SAMPLES}
    cluster, cluster_start = start_cluster(2)
    try:
        with tempfile.TemporaryDirectory(prefix="seedbed-bench-sweep-") as name:
            for _ in range(rounds):
                figures = pooled(seed_range, 2, Path(name))
                _add(samples, ("start2", "pool2", "pool2_cpu", "pool2_extra"), figures)
                cluster._seen.clear()
                figures_dask = on_cluster(seed_range, cluster, Path(name))
                _add(samples, ("dask2", "dask2_cpu", "dask2_extra"), figures_dask)
    finally:
        cluster.close()
    median = {key: statistics.median(values) for key, values in samples.items() if values}
    return {
        "seeds": seeds, "rounds": rounds, "jobs2_seeds_per_s": 1 / median["pool2"],
        "dask2_seeds_per_s": 1 / median["dask2"],
        "dask2_over_jobs2": median["pool2"] / median["dask2"],
        "jobs2_cpu_ms_per_seed": median["pool2_cpu"] * 1000,
        "dask2_cpu_ms_per_seed": median["dask2_cpu"] * 1000,
        "dask2_cpu_over_jobs2": median["pool2_cpu"] / median["dask2_cpu"],
        "jobs2_extra_cpu_ms_per_seed": median["pool2_extra"] * 1000,
        "dask2_extra_cpu_ms_per_seed": median["dask2_extra"] * 1000,
        "dask2_start_s": cluster_start,
        "rounds_jobs2_dask2_s_per_seed": list(zip(samples["pool2"], samples["dask2"], strict=True)),
    }  # fmt: skip


def report_versus(args: argparse.Namespace) -> None:
    result = versus_dask(args.seeds, args.rounds)
    result["target"] = TARGET
    if args.json:
        print(json.dumps(result, sort_keys=True))
        return
    print(
        f"{TARGET}: --jobs 2 against Dask local:2, {args.seeds} seeds, medians of "
        f"{args.rounds} interleaved rounds, load average {os.getloadavg()[0]:.2f} at end"
    )
    print(
        f"  seeds/s (wall)                 {result['jobs2_seeds_per_s']:8.2f} --jobs 2, "
        f"{result['dask2_seeds_per_s']:.2f} Dask: {result['dask2_over_jobs2']:.2f}x "
        "(target >= 0.95x)"
    )
    print(
        f"  CPU per seed, all processes    {result['jobs2_cpu_ms_per_seed']:8.1f} ms --jobs 2, "
        f"{result['dask2_cpu_ms_per_seed']:.1f} ms Dask: the pool's "
        f"{result['dask2_cpu_over_jobs2']:.3f}x"
    )
    print(
        f"  CPU per seed outside the seeds {result['jobs2_extra_cpu_ms_per_seed']:8.2f} ms "
        f"--jobs 2, {result['dask2_extra_cpu_ms_per_seed']:.2f} ms Dask (target <= 3 ms)"
    )
    print(f"  Dask cluster start-up (once)   {result['dask2_start_s']:8.2f} s")  # fmt: skip


DETANGLE_MS = 0.42  # detangle's CPU per seed for a tiny system (issue 30)
TINY = {"scenario": _tiny.scenario.run, "bare loop": _tiny.bare}


def tiny_cpu(seeds: int, rounds: int) -> dict[str, float]:
    """Median CPU ms per seed of each way of running the tiny system, rounds interleaved."""
    samples: dict[str, list[float]] = {name: [] for name in TINY}
    for run in TINY.values():
        run(10**9)  # warm-up
    for _ in range(rounds):
        for name, run in TINY.items():
            started = time.thread_time()
            for seed in range(seeds):
                run(seed)
            samples[name].append((time.thread_time() - started) / seeds * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def tiny_instructions(seeds: int) -> dict[str, float]:
    """Callgrind instructions per seed of each way (start-up and warm-up cancel out)."""
    script = str(Path(__file__).resolve())
    per_seed = {}
    for name in TINY:
        few = count_instructions([script, "--tiny-one", name, str(seeds)])
        many = count_instructions([script, "--tiny-one", name, str(3 * seeds)])
        per_seed[name] = (many - few) / (2 * seeds)
    return per_seed


def report_tiny(args: argparse.Namespace) -> None:
    if args.instructions:
        counts = tiny_instructions(max(1, args.seeds // 10))
        print("tiny system (bench/_tiny.py), callgrind instructions per seed")
        for name, count in counts.items():
            print(f"  {name:<10} {count:12,.0f}")
        extra = counts["scenario"] - counts["bare loop"]
        print(f"  a Scenario's set-up over the bare loop: {extra:,.0f} instructions per seed")
        return
    cpu = tiny_cpu(args.seeds, args.rounds)
    print(f"tiny system (bench/_tiny.py), {args.seeds} seeds, medians of {args.rounds} "
          f"interleaved rounds, CPU time")  # fmt: skip
    for name, ms in cpu.items():
        print(f"  {name:<10} {ms:6.3f} ms per seed  {1000 / ms:8.0f} seeds per CPU s")
    print(f"  detangle   {DETANGLE_MS:6.3f} ms per seed  {1000 / DETANGLE_MS:8.0f} seeds per CPU s "
          "(issue 30's figure, not measured here)")  # fmt: skip
    extra = cpu["scenario"] - cpu["bare loop"]
    print(f"  a Scenario's set-up over the bare loop: {extra:.3f} ms per seed (target <= 0.2)")


def main() -> None:
    if sys.argv[1:2] == ["--tiny-one"]:  # internal: one process's seeds, for callgrind
        run = TINY[sys.argv[2]]
        for seed in range(int(sys.argv[3])):
            run(seed)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster")
    parser.add_argument("--tiny", action="store_true", help="a Scenario's per-seed set-up cost")
    parser.add_argument("--instructions", action="store_true", help="with --tiny: callgrind")
    parser.add_argument("--target", help=f"sweep this target (e.g. {SWARM}) instead")
    parser.add_argument(
        "--versus-dask", action="store_true", help="only --jobs 2 against Dask local:2, interleaved"
    )
    parser.add_argument(
        "--dask-processes",
        action="store_true",
        help="local:2 as worker processes (the old way), not threads",
    )
    args = parser.parse_args()
    if args.target:
        global TARGET
        TARGET = args.target
        SETTINGS["target"] = args.target
    if args.dask_processes:
        _dask.LOCAL_PROCESSES = True
    if args.versus_dask:
        report_versus(args)
        return
    if args.tiny:
        report_tiny(args)
        return
    load_before = os.getloadavg()[0]
    result = measure(args.seeds, args.rounds, dask=not args.no_dask and _has_dask())
    result["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    result["cores"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    if args.json:
        print(json.dumps(result, sort_keys=True))
        return
    print(f"sweep of {TARGET}, {args.seeds} seeds, medians of {args.rounds} rounds, "
          f"{result['cores']} cores, load average {result['load_average'][0]} at start, "
          f"{result['load_average'][1]} at end")  # fmt: skip
    print(f"  scenario.run(seed) in a loop   {result['in_process_seeds_per_s']:8.1f} seeds/s")
    print(f"  --jobs 1                       {result['jobs1_seeds_per_s']:8.1f} seeds/s")
    low, high = result["spread_jobs2_seeds_per_s"]
    print(f"  --jobs 2                       {result['jobs2_seeds_per_s']:8.1f} seeds/s "
          f"({low:.1f}-{high:.1f})")  # fmt: skip
    print(f"  --jobs 2 / --jobs 1            {result['jobs2_over_jobs1']:8.2f}x  (target >= 1.7x)")
    print(f"  pool overhead per seed         {result['overhead_ms_per_seed']:8.2f} ms "
          "(target < 5 ms)")  # fmt: skip
    starts = result["worker_start_s"]
    print(f"  worker start-up (once)         {starts['jobs1']:8.2f} s with 1, "
          f"{starts['jobs2']:.2f} s with 2")  # fmt: skip
    if "dask2_seeds_per_s" in result:
        _print_dask(result)


def _print_dask(result: dict[str, Any]) -> None:
    print(f"  Dask local:2                   {result['dask2_seeds_per_s']:8.1f} seeds/s")
    print(f"  Dask local:2 / --jobs 2        {result['dask2_over_jobs2']:8.2f}x  (target >= 0.85x)")
    print(f"  per-seed overhead, 2 workers   {result['jobs2_overhead_ms_per_seed']:8.2f} ms "
          f"--jobs 2, {result['dask2_overhead_ms_per_seed']:.2f} ms Dask")  # fmt: skip
    print(f"  CPU per seed, all processes    {result['jobs2_cpu_ms_per_seed']:8.2f} ms "
          f"--jobs 2, {result['dask2_cpu_ms_per_seed']:.2f} ms Dask "
          f"({result['dask2_cpu_over_jobs2']:.2f}x), "
          f"{result['in_process_cpu_ms_per_seed']:.2f} ms in a loop")  # fmt: skip
    print(f"  CPU per seed outside the seeds {result['jobs2_extra_cpu_ms_per_seed']:8.2f} ms "
          f"--jobs 2, {result['dask2_extra_cpu_ms_per_seed']:.2f} ms Dask")  # fmt: skip
    print(f"  Dask cluster start-up (once)   {result['dask2_start_s']:8.2f} s")


def _has_dask() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
