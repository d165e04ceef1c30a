"""Instructions per file operation through the Python file API inside a node (issue 40).

One client of a `Simulation` repeats open, write 100 bytes, flush, fsync,
close, on the default disk (no latency, so neither door waits): once with
plain `open`/`os.fsync` (interposed: the stand-ins, `NodeFiles`, the
standard library's buffered file over `SimFileIO`), once with `seedbed.fs`
directly (`await fs.open`, `write`, `fsync`, `close`), and once with plain
calls outside any node, on the real file system, for scale. Callgrind counts
two sizes in fresh processes and prints the difference per round, so
start-up and imports cancel out; the counts repeat exactly.

`--isolate` counts what `isolate=["examples.kvstore"]` adds to a node's
start (the store's modules imported afresh: all 14 of them, as the bench
loads `scenarios` first; and `main` relinked), and the memory an
incarnation keeps for its copies while it lives.

    python bench/file_io.py [--isolate]      # needs valgrind
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _callgrind import per_unit

SMALL, LARGE = 100, 1100  # rounds
MODES = {
    "plain": "open/write/flush/os.fsync/close inside a node (interposed)",
    "fs": "seedbed.fs open/write/fsync/close inside a node",
    "real": "open/write/flush/os.fsync/close outside any node (real files)",
}


async def plain_rounds(rounds: int, folder: str) -> int:
    for _ in range(rounds):
        with open(os.path.join(folder, "f"), "wb") as f:
            f.write(b"x" * 100)
            f.flush()
            os.fsync(f.fileno())
    return rounds


async def fs_rounds(rounds: int) -> int:
    import seedbed

    for _ in range(rounds):
        async with await seedbed.fs.open("/f", "w") as file:
            await file.write(b"x" * 100)
            await file.fsync()
    return rounds


def workload(mode: str, rounds: int) -> None:
    """Run `rounds` rounds in `mode`; print the loop steps the run took."""
    import seedbed

    if mode == "real":
        with tempfile.TemporaryDirectory() as folder:
            print(seedbed.run(lambda: plain_rounds(rounds, folder), seed=1).steps)
        return
    sim = seedbed.Simulation(seed=1)
    sim.client("c1", (lambda: plain_rounds(rounds, "/")) if mode == "plain" else
               (lambda: fs_rounds(rounds)))  # fmt: skip
    print(sim.run(max_time=1000.0).steps)


def starts(isolate: bool, count: int) -> None:
    """`count` clients that start and end at once, isolated or not; print the steps."""
    from examples.kvstore import client, scenarios

    import seedbed

    async def idle() -> int:
        await asyncio.sleep(0)
        return len(client.__name__) + len(scenarios.__name__)

    sim = seedbed.Simulation(seed=1)
    for k in range(count):
        sim.client(f"c{k}", idle, isolate=["examples.kvstore"] if isolate else None)
    print(sim.run(max_time=10.0).steps)


def kept_per_start() -> int:
    """Bytes a live isolated incarnation keeps, over a plain one (tracemalloc)."""
    from examples.kvstore import scenarios  # noqa: F401  (loaded: isolation copies it)

    import seedbed

    async def hold() -> None:
        await asyncio.sleep(5)

    def traced(isolate: bool) -> int:
        sim = seedbed.Simulation(seed=1)
        for k in range(10):
            sim.host(f"h{k}", hold, isolate=["examples.kvstore"] if isolate else None)
        tracemalloc.start()
        sim.advance(1.0)
        size = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        sim.run(max_time=2.0)
        return size

    return (traced(True) - traced(False)) // 10


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        mode = os.environ["SEEDBED_BENCH_MODE"]
        if mode.startswith("start-"):
            starts(mode == "start-isolated", int(sys.argv[2]))
        else:
            workload(mode, int(sys.argv[2]))
        return
    if "--isolate" in sys.argv[1:]:
        counts = {}
        for mode in ("start-isolated", "start-plain"):
            os.environ["SEEDBED_BENCH_MODE"] = mode
            counts[mode] = per_unit(__file__, 4, 24, units_per_round=1)[0]
        extra = counts["start-isolated"] - counts["start-plain"]
        print("a node's start with isolate=['examples.kvstore'] (14 modules):")
        print(f"| instructions per start, isolated | {counts['start-isolated']:,.0f} |")
        print(f"| instructions per start, not isolated | {counts['start-plain']:,.0f} |")
        print(f"| what isolation adds per start | {extra:,.0f} |")
        print(f"| memory a live isolated incarnation keeps | {kept_per_start():,} bytes |")
        return
    rows = {}
    for mode in MODES:
        os.environ["SEEDBED_BENCH_MODE"] = mode
        rows[mode] = per_unit(__file__, SMALL, LARGE, units_per_round=1)
    print("one round: open, write 100 bytes, (flush,) fsync, close; default disk, no latency")
    print("| how | instructions per round | loop steps per round | vs seedbed.fs |")
    print("|---|---:|---:|---:|")
    for mode, (instructions, steps) in rows.items():
        ratio = instructions / rows["fs"][0]
        print(f"| {MODES[mode]} | {instructions:,.0f} | {steps:.2f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
