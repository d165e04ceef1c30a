"""Benchmark: what a scenario's oracles and nemesis cost, and the hooks outside a run.

One world (five hosts making echo round trips to each other over streams)
runs as a `seedbed.Scenario` in three variants in the same process,
alternating, several times each:

- base: no invariants, no faults;
- invariants: three cheap invariants (a comparison of counters each),
  checked after every step in which a node ran (`invariant_interval=1`);
- nemesis: the base world under a fault profile (crashes, partitions,
  clogs, stream stalls, latency spikes).

Invariants do not change the run (the same steps, the same trace hash), so
their ratio is CPU seconds against CPU seconds. Faults change the run, so the
nemesis ratio is CPU time per loop step. CPU time (`time.process_time`)
rather than wall time, since the machine's cores are shared; medians.

It also prints the cost of each hook (`buggify`, `failpoint`, `always`...)
outside a simulation, in ns per call, next to an empty function's call.
With `--instructions`, callgrind counts each variant's instructions in a
fresh process: the repeatable view of the same ratios.

    PYTHONHASHSEED=0 python bench/scenario.py [--runs 5] [--quick] [--instructions]

It reports; it never gates. Target: invariants under 1.3x the base.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import timeit

import seedbed
from seedbed import FaultProfile, Scenario, Simulation

HOSTS = ("h1", "h2", "h3", "h4", "h5")
PORT = 6000
TARGET = 1.3
counters = {"sent": 0, "answered": 0, "errors": 0}


def world(sim: Simulation) -> None:
    counters.update(sent=0, answered=0, errors=0)

    async def host() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)

        await asyncio.start_server(echo, "0.0.0.0", PORT)
        await asyncio.sleep(0.01)
        me = seedbed.current_node()
        while True:
            for other in HOSTS:
                if other == me:
                    continue
                try:
                    reader, writer = await asyncio.open_connection(other, PORT)
                    for _ in range(20):
                        counters["sent"] += 1
                        writer.write(b"ping\n")
                        if await asyncio.wait_for(reader.readline(), 1.0):
                            counters["answered"] += 1
                    writer.close()
                except (OSError, TimeoutError):
                    counters["errors"] += 1
            await asyncio.sleep(0.01)

    for name in HOSTS:
        sim.host(name, host)


INVARIANTS = [
    lambda: counters["answered"] <= counters["sent"],
    lambda: counters["errors"] >= 0,
    lambda: counters["sent"] >= 0,
]
FAULTS = FaultProfile(crash_per_second=0.2, partition_per_second=0.3, clog_per_second=0.3,
                      stream_stall_per_second=0.5, latency_spike_per_second=0.5)  # fmt: skip


def variants(duration: float) -> dict[str, Scenario]:
    return {
        "base": Scenario("bench", world, duration=duration),
        "invariants": Scenario("bench", world, duration=duration, invariants=INVARIANTS),
        "nemesis": Scenario("bench", world, duration=duration, faults=FAULTS),
    }


def measure(scenario: Scenario) -> tuple[float, int, str]:
    start = time.process_time()
    result = scenario.run(seed=1)
    return time.process_time() - start, result.steps, result.trace_hash


def hook_costs() -> dict[str, float]:
    """ns per call outside a simulation, best of several repeats."""
    names = {**vars(seedbed), "empty": lambda cond, message: None}
    calls = {
        "empty function(cond, msg)": 'empty(True, "m")',
        "buggify(why)": 'buggify("x")',
        "failpoint(why)": 'failpoint("x")',
        "always(cond, msg)": 'always(True, "m")',
        "sometimes(cond, msg)": 'sometimes(True, "m")',
        "reachable(msg)": 'reachable("m")',
        "unreachable(msg)": 'unreachable("m")',
    }
    n = 200_000
    return {
        label: min(timeit.repeat(stmt, globals=names, number=n, repeat=7)) / n * 1e9
        for label, stmt in calls.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    duration = args.duration or (2.0 if args.quick else 10.0)
    if args.one:
        measure(variants(duration)[args.one])
        return
    if args.instructions:
        instructions(duration)
        return
    scenarios = variants(duration)
    times: dict[str, list[float]] = {name: [] for name in scenarios}
    steps: dict[str, int] = {}
    hashes: dict[str, str] = {}
    for _ in range(args.runs):
        for name, scenario in scenarios.items():
            seconds, steps[name], hashes[name] = measure(scenario)
            times[name].append(seconds)
    base = statistics.median(times["base"])
    per_step = {name: statistics.median(times[name]) / steps[name] for name in scenarios}
    print(f"world: {len(HOSTS)} hosts, echo round trips over streams, {duration:g} virtual s")
    print(f"{'variant':<12} {'CPU s':>8} {'steps':>9} {'us/step':>8} {'ratio':>7}")
    for name in scenarios:
        median = statistics.median(times[name])
        ratio = median / base if name == "invariants" else per_step[name] / per_step["base"]
        us = per_step[name] * 1e6
        print(f"{name:<12} {median:8.3f} {steps[name]:9d} {us:8.2f} {ratio:6.2f}x")
    same = hashes["base"] == hashes["invariants"]
    print(f"invariants leave the run unchanged (same trace hash): {same}")
    ratio = statistics.median(times["invariants"]) / base
    print(f"three cheap invariants: {ratio:.2f}x (target under {TARGET}x): "
          f"{'met' if ratio < TARGET else 'NOT met'}")  # fmt: skip
    print("\nhooks outside a simulation (ns per call, best of 7):")
    for label, ns in hook_costs().items():
        print(f"  {label:<28} {ns:6.1f}")


def instructions(duration: float) -> None:
    """Instructions per loop step: two durations of the base cancel start-up."""
    sys.path.insert(0, "bench")
    from _callgrind import count_instructions

    def count(name: str, seconds: float) -> int:
        return count_instructions(["bench/scenario.py", "--one", name, "--duration", str(seconds)])

    short, long = duration, 2 * duration
    steps_short = variants(short)["base"].run(seed=1).steps
    steps_long = variants(long)["base"].run(seed=1).steps
    base_short, base_long = count("base", short), count("base", long)
    invariants_long = count("invariants", long)
    per_step = (base_long - base_short) / (steps_long - steps_short)
    extra = (invariants_long - base_long) / steps_long
    print(f"callgrind: {per_step:,.0f} instructions per loop step in the base world; "
          f"three invariants add {extra:,.0f} per step: {1 + extra / per_step:.3f}x")  # fmt: skip


if __name__ == "__main__":
    main()
