"""Benchmark of the collection checkers: set, queue, counter, unique ids, at 1M operations.

Each case runs in a fresh interpreter, so its peak memory is its own. A
case generates a valid history of ``--size`` operations (default 1,000,000)
executed one at a time against the data type, 16 clients whose
invoke/complete windows overlap their neighbours' (each operation takes
effect at its own instant inside its window; 1% end ``info``, taking effect
anyway), builds the `History` (the pairing of invocations and completions
is the history's, not the checker's), then times the check alone:

- ``set``: adds of unique elements, a read every ``--read-every``
  operations returning the whole set (so the elements read grow as
  operations times reads: the figure printed with the case);
- ``queue``: enqueues and dequeues alternating, a final drain;
- ``counter``: adds of 1-5 and reads of the count, half each;
- ``unique-ids``: generates returning distinct ids.

Each line gives wall and CPU seconds of the check (on a shared machine the
CPU time is the steadier figure), operations per CPU second, the peak RSS
of the process when the history was ready and when the check ended (their
difference is the check's own memory), and the verdict, which must be
valid. With ``--parse``, the history is also written as Jepsen EDN and the
time to read it back (``read_op_history``) is printed.

    python bench/checkers.py [--size 1000000] [--read-every 20000] [--only set] [--parse]

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
import tempfile
import time
from collections.abc import Iterator
from typing import Any

CASES = ("set", "queue", "counter", "unique-ids")
PROCESSES = 16


def windows(n: int, rng: random.Random) -> Iterator[tuple[int, float, float, bool]]:
    """(operation, invoke time, complete time, unknown outcome) for n serial operations."""
    for i in range(n):
        yield i, i - rng.uniform(0.1, 5), i + rng.uniform(0.1, 5), rng.random() < 0.01


def generate(case: str, n: int, read_every: int, seed: int = 1) -> tuple[list[Any], int]:
    """Events of a valid history, and how many elements its reads return in all."""
    from seedbed.check._history import Event

    rng = random.Random(seed)
    moments: list[tuple[float, Any]] = []
    state = _State()
    for i, start, end, unknown in windows(n, rng):
        f, argument, result = state.step(case, i, read_every, rng)
        process = i % PROCESSES
        moments.append((start, Event(process, "invoke", f, argument)))
        moments.append((end, Event(process, "info" if unknown else "ok", f, result)))
    if case == "queue":
        end = n + 10.0
        moments.append((end, Event(PROCESSES, "invoke", "drain", None)))
        moments.append((end + 1, Event(PROCESSES, "ok", "drain", tuple(state.queue))))
    moments.sort(key=lambda m: m[0])
    return [event for _, event in moments], state.elements_read


class _State:
    """The data type the operations run against, one at a time."""

    def __init__(self) -> None:
        self.members: list[int] = []
        self.queue: list[int] = []
        self.head = 0
        self.count = 0
        self.elements_read = 0

    def step(self, case: str, i: int, read_every: int, rng: random.Random) -> tuple[str, Any, Any]:
        if case == "set":
            if i % read_every == read_every - 1:
                seen = tuple(self.members)
                self.elements_read += len(seen)
                return "read", None, seen
            self.members.append(i)
            return "add", i, None
        if case == "queue":
            if i % 2 == 0:
                self.queue.append(i)
                return "enqueue", i, None
            taken = self.queue.pop(0) if self.queue else None
            return "dequeue", None, taken
        if case == "counter":
            if i % 2 == 0:
                delta = rng.randint(1, 5)
                self.count += delta
                return "add", delta, None
            return "read", None, self.count
        return "generate", None, i


def run_case(case: str, n: int, read_every: int, parse: bool) -> dict[str, Any]:
    from seedbed.check import History, check_collection

    events, elements = generate(case, n, read_every)
    history = History(events)
    del events
    ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start, cpu = time.perf_counter(), time.process_time()
    verdict = check_collection(history, case)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {
        "case": case, "ops": len(history.operations()), "elements_read": elements,
        "seconds": seconds, "cpu": cpu, "ready_mb": ready, "peak_mb": peak,
        "verdict": str(verdict.outcome), "correct": bool(verdict),
    }  # fmt: skip
    if parse:
        result["parse_s"] = _parse_seconds(history)
    return result


def _parse_seconds(history: Any) -> float:
    """Seconds to read the history back from Jepsen EDN (one map per line)."""
    from seedbed.check import read_op_history

    with tempfile.NamedTemporaryFile("w", suffix=".edn", delete=False) as out:
        for event in history:
            out.write(f"{{:type :{event.type}, :f :{event.f}, :value {_edn(event.value)}, "
                      f":process {event.process}}}\n")  # fmt: skip
    try:
        start = time.process_time()
        read_op_history(out.name)
        return time.process_time() - start
    finally:
        os.unlink(out.name)


def _edn(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, tuple):
        return "[" + " ".join(map(str, value)) + "]"
    return str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="operations per case")
    parser.add_argument("--read-every", type=int, default=20_000, help="set: a read every N ops")
    parser.add_argument("--only", choices=CASES, action="append", help="run only these cases")
    parser.add_argument("--parse", action="store_true", help="also time reading it as EDN")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.size, args.read_every, args.parse)))
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(f"{'case':<12}{'ops':>9}{'elements':>11}{'seconds':>9}{'cpu s':>8}{'ops/cpu s':>11}"
          f"{'ready MB':>10}{'peak MB':>9}{'check MB':>10}  verdict")  # fmt: skip
    wrong = False
    for case in args.only or CASES:
        command = [sys.executable, __file__, "--case", case, "--size", str(args.size),
                   "--read-every", str(args.read_every)]  # fmt: skip
        command += ["--parse"] if args.parse else []
        r = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        wrong = wrong or not r["correct"]
        parsed = f"  (EDN read in {r['parse_s']:.1f} s CPU)" if "parse_s" in r else ""
        print(
            f"{case:<12}{r['ops']:>9}{r['elements_read']:>11}{r['seconds']:>9.2f}{r['cpu']:>8.2f}"
            f"{r['ops'] / r['cpu']:>11.0f}{r['ready_mb']:>10.0f}{r['peak_mb']:>9.0f}"
            f"{r['peak_mb'] - r['ready_mb']:>10.0f}  {r['verdict']}{parsed}"
        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
