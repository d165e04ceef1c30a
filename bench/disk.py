"""Instructions per simulated disk operation, end to end (issue 30).

One client of a `Simulation` writes 100 bytes and fsyncs, over and over, on
a disk with 0.1-2 ms of latency per operation: each write and each fsync is
one operation (the `File` call, the disk model, the latency draw and wait,
the loop's callbacks that resume the client). Callgrind counts two sizes in
fresh processes and prints the difference over the operations between them,
so start-up and imports cancel out; it repeats exactly, whatever the load.

    python bench/disk.py            # needs valgrind
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _callgrind import per_unit

SMALL, LARGE = 200, 2200  # write+fsync rounds: two operations each


def workload(rounds: int) -> None:
    """Run the client for `rounds` rounds; print the loop steps the run took."""
    import seedbed

    async def client() -> int:
        async with await seedbed.fs.open("/f", "wb") as file:
            for _ in range(rounds):
                await file.write(b"x" * 100)
                await file.fsync()
        return rounds

    disk = seedbed.DiskConfig(latency_min=0.0001, latency_max=0.002)
    sim = seedbed.Simulation(seed=1, disk=disk)
    sim.client("c1", client)
    print(sim.run(max_time=1000.0).steps)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        workload(int(sys.argv[2]))
        return
    instructions, steps = per_unit(__file__, SMALL, LARGE, units_per_round=2)
    operations = 2 * (LARGE - SMALL)
    print(f"simulated disk, {operations} operations (write or fsync, 0.1-2 ms latency):")
    print(f"| instructions per operation | {instructions:,.0f} |")
    print(f"| loop steps per operation | {steps:.2f} |")


if __name__ == "__main__":
    main()
