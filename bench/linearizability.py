"""Benchmark of the linearizability checker on the shared Porcupine data.

Times `seedbed.check.linearizable` on every history in
../shared/data/linearizability (relative to the repository): the median of
several runs per file, each run on fresh checker state (the search keeps
nothing between calls) after a garbage collection. Parsing is timed apart,
once, because Porcupine's own benchmark excludes it too. The verdict-only
path is timed (``witness=False``), as Porcupine's ``CheckEvents`` is.

    python bench/linearizability.py [--runs 5] [--data DIR]
    python bench/linearizability.py --memory [--sizes 5,15,50]

Prints a table and the two totals next to Porcupine on the same machine and
the targets; exits 1 if a target is missed or a published verdict is wrong.

`--memory` measures instead the peak memory (maximum resident set) of
`seedbed check-history` on generated linearizable histories of 5, 15 and
50 MB (written to a temporary directory, never committed), each in a fresh
process. Target: a 50 MB history under 2 GB (memory about linear in the
history; a bitset per operation once made it 21.6 GB).
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _big_history import generate
from seedbed.check import History, Model, Outcome, cas_register, kv, linearizable, read_history

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "linearizability"

PORCUPINE_ETCD_S = 0.4  # Porcupine (Go), all 103 etcd logs together (0.40-0.56 s measured)
PORCUPINE_C50_OK_S = 0.15  # Porcupine (Go), kv/c50-ok.txt
TARGET_ETCD_S = 0.56  # at most Porcupine's time (its slower figure), in CPU seconds
TARGET_C50_OK_S = 1.5
TARGET_50MB_PEAK_MB = 2000


def model_for(name: str) -> Model:
    return cas_register() if name.startswith("etcd/") else kv()


def time_check(history: History, model: Model, runs: int) -> tuple[float, float, Outcome]:
    """Median wall and CPU seconds of ``runs`` fresh checks, and the verdict.

    The machine is shared: CPU time is the steadier figure, and the etcd
    target is judged on it."""
    samples, cpu = [], []
    outcome = Outcome.UNKNOWN
    for _ in range(runs):
        gc.collect()
        start, cpu_start = time.perf_counter(), time.process_time()
        outcome = linearizable(history, model, witness=False).outcome
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    return statistics.median(samples), statistics.median(cpu), outcome


def published(data: Path) -> dict[str, bool]:
    table = data / "verdicts.tsv"
    rows = [line.split("\t") for line in table.read_text().splitlines()[1:] if line.strip()]
    return {name: flag.strip() == "true" for name, flag in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--memory", action="store_true", help="measure peak memory instead")
    parser.add_argument("--sizes", default="5,15,50", help="history sizes in MB (--memory)")
    args = parser.parse_args()
    if args.memory:
        return memory([float(size) for size in args.sizes.split(",")])
    if not args.data.is_dir():
        print(f"no data at {args.data}", file=sys.stderr)
        return 2
    expected = published(args.data)
    files = sorted(args.data.glob("etcd/*.log")) + sorted(args.data.glob("kv/*.txt"))
    medians: dict[str, float] = {}
    cpu_medians: dict[str, float] = {}
    wrong = []
    print(f"{'history':24} {'ops':>5} {'verdict':>17} {'check (s)':>10} {'parse (s)':>10}")
    for path in files:
        name = path.relative_to(args.data).as_posix()
        start = time.perf_counter()
        history = read_history(path)
        parse_s = time.perf_counter() - start
        seconds, cpu, outcome = time_check(history, model_for(name), args.runs)
        medians[name] = seconds
        cpu_medians[name] = cpu
        mark = ""
        if name in expected and (outcome is Outcome.LINEARIZABLE) != expected[name]:
            wrong.append(name)
            mark = "  WRONG"
        ops = len(history.operations())
        print(f"{name:24} {ops:5d} {outcome:>17} {seconds:10.4f} {parse_s:10.4f}{mark}")
    return summarize(medians, cpu_medians, wrong, args.runs)


def summarize(
    medians: dict[str, float], cpu_medians: dict[str, float], wrong: list[str], runs: int
) -> int:
    etcd_wall = sum(s for name, s in medians.items() if name.startswith("etcd/"))
    etcd = sum(s for name, s in cpu_medians.items() if name.startswith("etcd/"))
    count = sum(1 for name in medians if name.startswith("etcd/"))
    c50 = medians.get("kv/c50-ok.txt", float("nan"))
    slowest = sorted(medians.items(), key=lambda kv: -kv[1])[:5]
    print(f"\nmedians of {runs} runs, Python {sys.version.split()[0]}")
    print(f"slowest: {', '.join(f'{n} {s:.3f}s' for n, s in slowest)}")
    print(f"{'':24} {'seedbed':>10} {'Porcupine':>10} {'target':>10}")
    etcd_ok = etcd <= TARGET_ETCD_S
    print(f"{f'etcd, {count} logs, wall':24} {etcd_wall:10.3f}")
    c50_ok = c50 < TARGET_C50_OK_S
    print(f"{f'etcd, {count} logs, CPU':24} {etcd:10.3f} {PORCUPINE_ETCD_S:10.2f} "
          f"{'<= ' + str(TARGET_ETCD_S):>10} {'ok' if etcd_ok else 'MISSED'}")  # fmt: skip
    print(f"{'kv/c50-ok.txt':24} {c50:10.3f} {PORCUPINE_C50_OK_S:10.2f} "
          f"{'< ' + str(TARGET_C50_OK_S):>10} {'ok' if c50_ok else 'MISSED'}")  # fmt: skip
    if wrong:
        print(f"wrong verdicts: {', '.join(wrong)}")
    return 0 if etcd_ok and c50_ok and not wrong else 1


def peak_mb(path: Path) -> tuple[float, str, float]:
    """Peak resident MB, the verdict line, and seconds of one check in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "check-history", "--model", "register", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far
    return peak_kb / 1024, (done.stdout or done.stderr).strip().split(": ", 1)[-1], seconds


def memory(sizes: list[float]) -> int:
    """Peak memory of check-history against history size (smallest first, so
    RUSAGE_CHILDREN's running maximum is each run's own peak)."""
    print(f"{'history (MB)':>12} {'ops':>9} {'peak RSS (MB)':>14} {'MB per MB':>10} "
          f"{'seconds':>8}  verdict")  # fmt: skip
    last_peak = 0.0
    with tempfile.TemporaryDirectory() as scratch:
        for size in sorted(sizes):
            path = Path(scratch) / f"h{size:g}.jsonl"
            ops = generate(path, size)
            peak, verdict, seconds = peak_mb(path)
            last_peak = peak
            print(f"{size:12g} {ops:9d} {peak:14.0f} {peak / size:10.1f} {seconds:8.1f}  {verdict}")
            path.unlink()
    largest = max(sizes)
    ok = largest < 50 or last_peak < TARGET_50MB_PEAK_MB
    print(
        f"target: {largest:g} MB history under {TARGET_50MB_PEAK_MB} MB: {'ok' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
