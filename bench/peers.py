"""Benchmark: seedbed's loop against stock asyncio and the other Python simulators.

The four workloads of issue 50 (`_workloads.py`: mixed tasks, one call_soon
chain, 1,000 chains, a sleep(0) storm), each as events per CPU second
(`time.process_time`, the run alone: not start-up, imports or loop creation)
over stock asyncio's, measured interleaved: every round runs every loop once
per workload, each in a fresh interpreter, so drift in the machine's load
hits all of them alike. Medians over `--rounds`.

Loops: stock asyncio; seedbed with its defaults (task-order exploration and
the 1 ms clock on), with task order off (the clock's cost alone) and with
both off ("exploration off"); optionally seedbed at another
checkout (`--against DIR`, e.g. a worktree of 7a76f9c, run from its `src`
with this interpreter); and the peers from PyPI where they are installed
(Python 3.12+): `seedloop` (its `DeterministicLoop`: FIFO, asyncio's own
`BaseEventLoop` without the poll) and `detangle` (its `SimLoop` with its
defaults, the step budget raised). A peer that is absent or fails is skipped
with the reason.

`--ring` also times a ring of N simulated nodes (asyncio streams over the
simulated network, a token passed round it) per node, seedbed now against
`--against`: the CPU per node of a large world.

    PYTHONHASHSEED=0 python bench/peers.py [--rounds 5] [--against /tmp/base7a] [--ring 100,2000]

`--instructions` counts instructions per event instead (callgrind, the run
alone: see `_callgrind.region`; the difference of two sizes), a view that
does not move with the machine's load.

It reports; it never gates.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _workloads
from _callgrind import count_region, region

SCRIPT = Path(__file__).resolve()
SEED = 1
LOOPS = ("asyncio", "seedbed", "seedbed-clock", "seedbed-plain", "against", "seedloop", "detangle")
LABELS = {
    "seedbed": "seedbed",
    "seedbed-clock": "seedbed, task order off",
    "seedbed-plain": "seedbed, exploration off",
    "against": "seedbed at --against",
    "seedloop": "seedloop (FIFO)",
    "detangle": "detangle",
}
RING_LAPS = 20


def make_loop(name: str) -> asyncio.AbstractEventLoop:
    """A fresh loop of the kind `name` names (imports only what it needs)."""
    if name == "asyncio":
        return asyncio.new_event_loop()
    if name in ("seedbed", "against"):
        import seedbed

        return seedbed.new_event_loop(seed=SEED)
    if name == "seedbed-clock":  # what the 1 ms clock costs alone
        import seedbed

        return seedbed.new_event_loop(seed=SEED, explore_tasks=False)
    if name == "seedbed-plain":
        import seedbed

        return seedbed.new_event_loop(seed=SEED, explore_tasks=False, clock_resolution=0)
    if name == "seedloop":
        from seedloop._loop import DeterministicLoop

        return DeterministicLoop()
    if name == "detangle":
        from detangle import SimConfig, SimLoop

        return SimLoop(SimConfig(max_steps=10**9))
    raise SystemExit(f"unknown loop {name!r}")


def measure(key: str, loop_name: str, scale: float) -> tuple[int, float]:
    """(events, events per CPU second) of one run of `key` on a fresh loop of `loop_name`."""
    loop = make_loop(loop_name)
    try:
        loop.run_until_complete(asyncio.sleep(0))  # one-off costs, paid by every loop
        awaitable, events = _workloads.WORKLOADS[key][1](loop, scale)
        gc.collect()
        with region():  # what `--instructions` counts (nothing otherwise)
            started = time.process_time()
            loop.run_until_complete(awaitable)
            spent = time.process_time() - started
    finally:
        loop.close()
    return events, events / spent


def ring_cpu_per_node(nodes: int) -> float:
    """CPU seconds per node to build a ring of `nodes` and pass a token round it,
    after a ring of three has paid the process's one-off costs (the world's
    modules imported, interposition's first scan)."""
    ring(3)
    gc.collect()
    with region():  # what `--instructions` would count
        started = time.process_time()
        ring(nodes)
        spent = time.process_time() - started
    return spent / nodes


def ring(nodes: int, **options: Any) -> str:
    """A ring of `nodes` simulated nodes passing a token `RING_LAPS` times round;
    its trace hash. `options` go to the `Simulation`."""
    import seedbed

    laps = RING_LAPS
    sim = seedbed.Simulation(seed=SEED, **options)
    names = [f"n{i}" for i in range(nodes)]

    def node(me: int) -> Any:
        async def main() -> None:
            inbox: asyncio.Queue[bytes] = asyncio.Queue()

            async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                while line := await reader.readline():
                    await inbox.put(line)

            await asyncio.start_server(serve, names[me], 7000)
            await asyncio.sleep(0.1)  # every node listens before anyone connects
            _, writer = await asyncio.open_connection(names[(me + 1) % nodes], 7000)
            if me == 0:
                writer.write(b"0\n")
            for _ in range(laps):
                token = await inbox.get()
                writer.write(str(int(token) + 1).encode() + b"\n")
            await writer.drain()

        return main

    for me in range(nodes - 1):
        sim.host(names[me], node(me))
    sim.client(names[-1], node(nodes - 1))  # the run ends when the last node has its laps
    return sim.run(max_time=3600).trace_hash


def run_child(loop_name: str, args: list[str], against: Path | None) -> tuple[float | None, str]:
    """One measurement in a fresh interpreter: (value, "") or (None, why not)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if loop_name == "against":
        if against is None:
            return None, "no --against"
        env["PYTHONPATH"] = os.pathsep.join([str(against / "src"), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, str(SCRIPT), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, last[:100]
    return float(proc.stdout.split()[-1]), ""


def skipped_peers() -> dict[str, str]:
    """Peers that cannot run here, with the reason."""
    reasons: dict[str, str] = {}
    for peer in ("seedloop", "detangle"):
        if sys.version_info < (3, 12):
            reasons[peer] = "needs Python 3.12+"
            continue
        try:
            __import__(peer)
        except ImportError as exc:
            reasons[peer] = f"not installed ({exc}); pip install {peer}"
    return reasons


def _chosen(args: argparse.Namespace) -> dict[str, tuple[str, _workloads.Workload]]:
    return {key: value for key, value in _workloads.WORKLOADS.items() if args.only in key}


def _loops(args: argparse.Namespace, skipped: dict[str, str]) -> list[str]:
    wanted = args.loops.split(",") if args.loops else LOOPS
    return [name for name in LOOPS if name in wanted and name not in skipped]


def report(args: argparse.Namespace) -> None:
    against = Path(args.against).resolve() if args.against else None
    skipped = skipped_peers()
    if against is None:
        skipped["against"] = "no --against"
    loops = _loops(args, skipped)
    scale = 0.2 if args.quick else 1.0
    samples: dict[tuple[str, str], list[float]] = {}
    print(f"python {platform.python_version()}, {args.rounds} rounds, interleaved; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
    for round_ in range(args.rounds):
        print(f"round {round_ + 1}/{args.rounds}", file=sys.stderr, flush=True)
        for key in _chosen(args):
            for name in loops:
                value, why = run_child(name, ["--one", key, name, str(scale)], against)
                if value is None:
                    skipped.setdefault(name, why)
                    continue
                samples.setdefault((key, name), []).append(value)
    shown = [name for name in loops if name != "asyncio" and name not in skipped]
    rows = [("workload", *(LABELS[name] for name in shown))]
    for key, (label, _) in _chosen(args).items():
        base = statistics.median(samples[(key, "asyncio")])
        cells = []
        for name in shown:
            values = samples.get((key, name))
            cells.append(f"{statistics.median(values) / base:.2f}" if values else "-")
        rows.append((label, *cells))
    _print_table(rows)
    print("events per CPU second as a multiple of stock asyncio's (medians)")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    if args.ring:
        report_ring([int(n) for n in args.ring.split(",")], args.rounds, against)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


def report_ring(sizes: list[int], rounds: int, against: Path | None) -> None:
    """CPU per node of rings, seedbed now against `--against`, interleaved."""
    names = ["seedbed"] + (["against"] if against is not None else [])
    cpu: dict[tuple[int, str], list[float]] = {}
    for _ in range(rounds):
        for size in sizes:
            for name in names:
                value, why = run_child(name, ["--ring-one", str(size)], against)
                if value is None:
                    raise SystemExit(f"ring of {size} on {name} failed: {why}")
                cpu.setdefault((size, name), []).append(value)
    for size in sizes:
        ours = statistics.median(cpu[(size, "seedbed")])
        line = f"ring of {size}: {ours * 1e3:.2f} ms CPU per node"
        if against is not None:
            theirs = statistics.median(cpu[(size, "against")])
            line += f", {theirs * 1e3:.2f} at --against: {ours / theirs:.2f}x"
        print(line)


INSTRUCTION_SCALES = (0.2, 0.4)  # two sizes: what the run does once cancels out


def report_instructions(args: argparse.Namespace) -> None:
    """Instructions per event (callgrind, the run alone, two sizes' difference)."""
    against = Path(args.against).resolve() if args.against else None
    skipped = skipped_peers()
    if against is None:
        skipped["against"] = "no --against"
    loops = _loops(args, skipped)
    rows = [("workload", *(["asyncio"] + [LABELS[name] for name in loops[1:]]))]
    for key, (label, _) in _chosen(args).items():
        counted = []
        for name in loops:
            env = {}
            if name == "against" and against is not None:
                env["PYTHONPATH"] = os.pathsep.join(
                    [str(against / "src"), os.environ.get("PYTHONPATH", "")]
                )
            (small, small_out), (big, big_out) = (
                count_region([str(SCRIPT), "--one", key, name, str(scale)], env)
                for scale in INSTRUCTION_SCALES
            )
            events = int(big_out.split()[-2]) - int(small_out.split()[-2])
            counted.append(f"{(big - small) / events:,.0f}")
        rows.append((label, *counted))
    _print_table(rows)
    print("instructions per event (callgrind, the run alone)")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")


def _print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def main() -> None:
    if sys.argv[1:2] == ["--one"]:  # internal: one measurement, printed
        key, loop_name, scale = sys.argv[2], sys.argv[3], float(sys.argv[4])
        events, rate = measure(key, loop_name, scale)
        print(events, rate)  # the rate last: what `run_child` reads
        return
    if sys.argv[1:2] == ["--ring-one"]:
        print(ring_cpu_per_node(int(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a fifth of the work per run")
    parser.add_argument("--against", help="a seedbed checkout to compare (its src is used)")
    parser.add_argument("--ring", help="ring sizes to time per node, e.g. 100,2000")
    parser.add_argument(
        "--instructions", action="store_true", help="instructions per event (callgrind) instead"
    )
    parser.add_argument("--only", default="", help="only the workloads whose key has this")
    parser.add_argument("--loops", help="only these loops, comma-separated (asyncio first)")
    args = parser.parse_args()
    if args.instructions:
        report_instructions(args)
        return
    report(args)


if __name__ == "__main__":
    main()
