"""Benchmark of the transactional (Elle-style) checker.

Cases, each in a fresh interpreter so that its peak memory is its own:

- ``huge-scc``: ../shared/data/elle/huge-scc.edn (about 10,000 transactions,
  one strongly connected component of about 1,160 under real-time order)
  read and checked end to end, all models;
- ``gen-N-K``: a generated valid list-append history of N transactions
  (1-4 micro-ops, half appends) over K keys in use at once, each key retired
  for a fresh one after 32 appends as Jepsen's workload does (otherwise reads
  return ever longer lists and the history itself grows quadratically);
  executed one at a time against a model, 16 clients whose invoke/complete
  windows overlap their neighbours'. Timed from the in-memory `History`.

Each line gives seconds (wall and CPU: on a shared machine the CPU time is
the steadier figure), transactions per CPU second, peak memory (max RSS of
the case's process when the check ends, and when the history was ready
before it), the verdict, and the ratio to a baseline measured in the
same process after the peak is taken: ``json.loads`` of every
transaction's micro-ops as one JSON document (one C-speed pass over the
same data: a yardstick for this machine's speed at that moment, which
other work on it moves a lot).

    python bench/txncheck.py [--quick] [--data DIR]
    python bench/txncheck.py --size 1000000 [--keys 10]   # one generated case

Targets: 100,000 transactions < 10 s, huge-scc < 5 s, memory < 1 GB;
1,000,000 transactions (``--size``) < 60 s and < 2 GB.
Exits 1 if a verdict is wrong; timing never gates (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "elle"
TARGET_100K_S = 10.0
TARGET_HUGE_S = 5.0
TARGET_MB = 1024
TARGET_1M_S = 60.0
TARGET_1M_MB = 2048


def generate(n: int, keys: int, seed: int = 1) -> list[Any]:
    """Events of a valid history: serial execution, overlapping windows."""
    from seedbed.check._history import Event

    rng = random.Random(seed)
    active = list(range(keys))
    fresh = keys
    counter = 0
    lists: dict[int, list[int]] = {}
    moments = []
    for i in range(n):
        mops = []
        for _ in range(rng.randint(1, 4)):
            slot = rng.randrange(keys)
            key = active[slot]
            if rng.random() < 0.5:
                counter += 1
                lists.setdefault(key, []).append(counter)
                mops.append(("append", key, counter))
                if len(lists[key]) >= 32:
                    active[slot], fresh = fresh, fresh + 1
            else:
                mops.append(("r", key, tuple(lists.get(key, ()))))
        invoked = tuple((f, k, None if f == "r" else v) for f, k, v in mops)
        process = i % 16
        start, end = i - rng.uniform(0.1, 5), i + rng.uniform(0.1, 5)
        moments.append((start, Event(process, "invoke", "txn", invoked)))
        moments.append((end, Event(process, "ok", "txn", tuple(mops))))
    moments.sort(key=lambda m: m[0])
    return [event for _, event in moments]


def run_case(name: str, data: Path) -> dict[str, Any]:
    """One case in this process: seconds, baseline seconds, verdict."""
    from seedbed.check import History, check_transactions, read_txn_history

    ready = 0.0
    if name == "huge-scc":
        path = data / "huge-scc.edn"
        start, cpu = time.perf_counter(), time.process_time()
        verdict = check_transactions(read_txn_history(path, "list-append"))
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        correct = {"G-single-realtime", "G2-item-realtime"} <= set(verdict.anomaly_names())
        correct = correct and verdict.models["serializable"] == "ok"
    else:
        _, n, k = name.split("-")
        history = History(generate(int(n), int(k)))
        ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start, cpu = time.perf_counter(), time.process_time()
        verdict = check_transactions(history)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        correct = bool(verdict)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert verdict.inference is not None
    text = json.dumps([[list(m) for m in t.mops] for t in verdict.inference.history.txns])
    start = time.perf_counter()
    json.loads(text)
    baseline = time.perf_counter() - start
    return {
        "case": name,
        "txns": verdict.transactions,
        "seconds": seconds,
        "cpu": cpu,
        "baseline": baseline,
        "peak_mb": peak,
        "ready_mb": ready,
        "verdict": f"{verdict.outcome} {','.join(verdict.anomaly_names()) or '-'}",
        "correct": correct,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000-transaction cases only")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--size", type=int, help="run one generated case of this many transactions")
    parser.add_argument("--keys", type=int, default=10, help="keys in use at once (--size)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.data)))
        return 0
    if args.size:
        cases = [f"gen-{args.size}-{args.keys}"]
    else:
        cases = ["gen-10000-10", "gen-10000-1000"]
        if not args.quick:
            cases += ["gen-100000-10", "gen-100000-1000"]
        if (args.data / "huge-scc.edn").exists():
            cases.insert(0, "huge-scc")
        else:
            print(f"huge-scc skipped: {args.data / 'huge-scc.edn'} absent")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        f"{'case':<18}{'txns':>8}{'seconds':>9}{'cpu s':>8}{'txns/s':>9}{'x json':>8}"
        f"{'peak MB':>9}{'ready MB':>9}  verdict"
    )
    wrong = False
    for case in cases:
        out = subprocess.run(
            [sys.executable, __file__, "--case", case, "--data", str(args.data)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        r = json.loads(out.stdout)
        wrong = wrong or not r["correct"]
        rate = r["txns"] / r["cpu"]
        ratio = r["seconds"] / r["baseline"]
        flag = "" if r["correct"] else "  WRONG"
        print(
            f"{case:<18}{r['txns']:>8}{r['seconds']:>9.2f}{r['cpu']:>8.2f}{rate:>9.0f}{ratio:>8.1f}"
            f"{r['peak_mb']:>9.0f}{r['ready_mb']:>9.0f}  {r['verdict']}{flag}"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print(
        f"targets: 100,000 transactions < {TARGET_100K_S:.0f} s, huge-scc < {TARGET_HUGE_S:.0f} s, "
        f"peak memory < {TARGET_MB} MB; 1,000,000 < {TARGET_1M_S:.0f} s and {TARGET_1M_MB} MB"
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
