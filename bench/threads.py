"""What a simulated thread costs, in instructions: a to_thread call and a lock handoff.

Counts, under callgrind, the instructions per unit of each workload as the
difference of two sizes in fresh processes (start-up and imports cancel out):

- `to_thread`: `await asyncio.to_thread(f)` with thread lanes (the default:
  the default executor's worker thread takes the job, runs it, hands the
  result back through `call_soon_threadsafe`) and with `threads="inline"`
  (the function runs at once on the loop's thread: today's inline call);
- `handoff`: two threads passing the turn through two locks (ping-pong), per
  handoff: a release that wakes the parked thread, which then takes the lock.
  Inline mode cannot run it (no thread starts); its `to_thread` is the baseline.

    python bench/threads.py          # needs valgrind
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _callgrind import count_with_output

SMALL, LARGE = 50, 250


def _to_thread(rounds: int, threads: str) -> int:
    import seedbed

    async def main() -> int:
        total = 0
        for i in range(rounds):
            total += await asyncio.to_thread(abs, -i)
        return total

    return seedbed.run(main, seed=1, threads=threads).steps


def _handoff(rounds: int) -> int:
    import seedbed

    async def main() -> None:
        ping, pong = threading.Lock(), threading.Lock()
        pong.acquire()

        def left() -> None:
            for _ in range(rounds):
                ping.acquire()
                pong.release()

        def right() -> None:
            for _ in range(rounds):
                pong.acquire()
                ping.release()

        workers = [threading.Thread(target=left), threading.Thread(target=right)]
        for worker in workers:
            worker.start()
        for worker in workers:
            await asyncio.to_thread(worker.join)

    return seedbed.run(main, seed=1).steps


def child(kind: str, rounds: int) -> None:
    if kind == "handoff":
        print(_handoff(rounds))
    else:
        print(_to_thread(rounds, kind))


def _per_unit(script: str, kind: str, per_round: int) -> tuple[float, float]:
    """(instructions, loop steps) per unit: two sizes, fresh processes, subtracted."""
    small, small_out = count_with_output([script, "--child", str(SMALL), kind])
    large, large_out = count_with_output([script, "--child", str(LARGE), kind])
    units = per_round * (LARGE - SMALL)
    steps = int(large_out.split()[-1]) - int(small_out.split()[-1])
    return (large - small) / units, steps / units


def main() -> None:
    script = str(Path(__file__).resolve())
    rows = [
        ("to_thread, inline (today)", "inline", 1),
        ("to_thread, thread lanes", "lanes", 1),
        ("lock handoff, thread lanes", "handoff", 2),
    ]
    for label, kind, per_round in rows:
        instructions, steps = _per_unit(script, kind, per_round)
        print(f"{label:30s} {instructions:>10,.0f} instructions  {steps:5.1f} loop steps")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[3], int(sys.argv[2]))
    else:
        main()
