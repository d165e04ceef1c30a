"""Benchmark: five networked nodes, on seedbed's simulated world and on real TCP.

The same node code (plain asyncio streams) runs twice in one run: as five
clients of a `seedbed.Simulation` with its default settings (node
interleaving on; per-hop latency 0.5-5 ms, mean 2.75 ms), and as five tasks on the real
asyncio loop over loopback TCP in one process. Two variants:

- streaming: each pair of nodes shares one connection, and both ends send
  many small lines on it, draining every 64 lines, while reading the other's;
- request/response: on each pair's connection, one end makes echo round
  trips and the other echoes.

It prints messages per wall second for both, their ratio, and virtual
seconds per wall second for the simulation; medians of several runs, each in
a fresh process (`--one VARIANT WORLD`). It reports; it never gates.

    PYTHONHASHSEED=0 python bench/world.py [--runs 5] [--quick]
    PYTHONHASHSEED=0 python bench/world.py --instructions   # callgrind, repeatable
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from _callgrind import count_instructions

NODES = 5
PORT = 7000
LINE = b"x" * 23 + b"\n"  # 24-byte messages


@dataclass(frozen=True)
class Sizes:
    lines_per_peer: int  # streaming
    round_trips_per_peer: int  # request/response


FULL = Sizes(lines_per_peer=20_000, round_trips_per_peer=4_000)
QUICK = Sizes(lines_per_peer=2_000, round_trips_per_peer=200)
TARGETS = {"streaming": 2.0, "request-response": 3.0}
TARGET_VIRTUAL_RATE = 20.0  # virtual seconds per wall second, request/response


# -- the node code: ordinary asyncio, the same in both worlds --------------------


async def _drain_reader(reader: asyncio.StreamReader, expected: int) -> int:
    got = 0
    while got < expected:
        line = await reader.readline()
        if not line:
            break
        got += 1
    return got


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    sizes: Sizes) -> int:  # fmt: skip
    """Both ends of a connection stream lines at each other; return lines read."""

    async def send() -> None:
        for i in range(sizes.lines_per_peer):
            writer.write(LINE)
            if i % 64 == 63:
                await writer.drain()
        await writer.drain()

    _, got = await asyncio.gather(send(), _drain_reader(reader, sizes.lines_per_peer))
    writer.close()
    return got


async def streaming_node(me: int, higher: list[tuple[str, int]], listen: tuple[str, int],
                         sizes: Sizes) -> int:  # fmt: skip
    """Stream lines both ways on a connection to every other node; return lines read."""
    lower = me  # nodes 0..me-1 connect to us
    received: list[int] = []
    all_in = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await _exchange(reader, writer, sizes))
        if len(received) == lower:
            all_in.set()

    server = await asyncio.start_server(accept, *listen)
    await asyncio.sleep(0.01)  # everyone listens before anyone connects

    async def connect(host: str, port: int) -> int:
        reader, writer = await asyncio.open_connection(host, port)
        return await _exchange(reader, writer, sizes)

    mine = sum(await asyncio.gather(*(connect(host, port) for host, port in higher)))
    if lower:
        await all_in.wait()
    server.close()
    return mine + sum(received)


async def echo_node(me: int, higher: list[tuple[str, int]], listen: tuple[str, int],
                    sizes: Sizes) -> int:  # fmt: skip
    """Round trips to every higher node, echoes for every lower one; return messages."""
    lower = me
    served: list[int] = []
    all_served = asyncio.Event()

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        count = 0
        while line := await reader.readline():
            writer.write(line)
            await writer.drain()
            count += 1
        writer.close()
        served.append(count)
        if len(served) == lower:
            all_served.set()

    server = await asyncio.start_server(echo, *listen)
    await asyncio.sleep(0.01)

    async def ask(host: str, port: int) -> int:
        reader, writer = await asyncio.open_connection(host, port)
        for _ in range(sizes.round_trips_per_peer):
            writer.write(LINE)
            await writer.drain()
            await reader.readline()
        writer.close()
        return sizes.round_trips_per_peer

    asked = sum(await asyncio.gather(*(ask(host, port) for host, port in higher)))
    if lower:
        await all_served.wait()
    server.close()
    return asked + sum(served)  # requests made + responses sent: each round trip counts 2


NodeCode = Callable[[int, list[tuple[str, int]], tuple[str, int], Sizes], Awaitable[int]]
VARIANTS: dict[str, NodeCode] = {"streaming": streaming_node, "request-response": echo_node}


# -- the two worlds --------------------------------------------------------------


def run_real(code: NodeCode, sizes: Sizes) -> tuple[int, float, float]:
    """All nodes as tasks of one real asyncio loop, over loopback TCP."""
    # Below Linux's ephemeral range (32768-60999): a client port of an earlier
    # run, still in TIME_WAIT, once made a listen here fail.
    base = 20000 + os.getpid() % 2000 * NODES
    listen = [("127.0.0.1", base + i) for i in range(NODES)]

    async def world() -> int:
        results = await asyncio.gather(
            *(code(i, listen[i + 1 :], listen[i], sizes) for i in range(NODES))
        )
        return sum(results)

    start = time.perf_counter()
    messages = asyncio.run(world())
    wall = time.perf_counter() - start
    return messages, wall, wall


def run_seedbed(code: NodeCode, sizes: Sizes) -> tuple[int, float, float]:
    """The same nodes as clients of a Simulation with its default settings."""
    import seedbed
    from seedbed.net import NetworkConfig

    names = [f"n{i}" for i in range(NODES)]
    sim = seedbed.Simulation(
        seed=1, network=NetworkConfig(latency_min=0.0005, latency_mean=0.00275, latency_max=0.005)
    )
    for i, name in enumerate(names):
        peers = [(other, PORT) for other in names[i + 1 :]]

        async def main(i: int = i, peers: list[tuple[str, int]] = peers, name: str = name) -> int:
            return await code(i, peers, (name, PORT), sizes)

        sim.client(name, main)
    start = time.perf_counter()
    result = sim.run(max_time=3600)
    wall = time.perf_counter() - start
    return sum(result.values.values()), wall, result.virtual_time


WORLDS = {"real": run_real, "seedbed": run_seedbed}


def one(variant: str, world: str, sizes: Sizes) -> None:
    messages, wall, virtual = WORLDS[world](VARIANTS[variant], sizes)
    print(json.dumps({"messages": messages, "wall": wall, "virtual": virtual}))


# -- the parent: fresh processes, interleaved, medians ------------------------------


SETTLE_SECONDS = 1.0  # a real-TCP run leaves the machine busy for a while (measured)


def measure(variant: str, world: str, quick: bool) -> dict[str, float]:
    """One measurement in a fresh process, after letting the previous one settle.

    Right after a real-TCP run, a seedbed run measured here took 1.1-1.25 s
    instead of 0.8-0.9 s back to back; a pause before every measurement, of
    either world, keeps one from taxing the next.
    """
    time.sleep(SETTLE_SECONDS)
    command = [sys.executable, __file__, "--one", variant, world] + (["--quick"] if quick else [])
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise SystemExit(f"measurement {variant} on {world} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# Two sizes whose difference is the measured work: start-up and imports cancel out.
INSTRUCTION_SIZES = (Sizes(5, 1), Sizes(5_000, 1_000))


def instructions_per_message(variant: str, world: str) -> float:
    """User-space instructions per message: the real world's kernel work is not counted."""

    def count(sizes: Sizes) -> tuple[int, int]:
        spec = f"{sizes.lines_per_peer},{sizes.round_trips_per_peer}"
        instructions = count_instructions([__file__, "--one", variant, world, "--size", spec])
        pairs = NODES * (NODES - 1) // 2
        per_pair = 2 * (
            sizes.lines_per_peer if variant == "streaming" else sizes.round_trips_per_peer
        )
        return instructions, pairs * per_pair

    (small, small_messages), (big, big_messages) = map(count, INSTRUCTION_SIZES)
    return (big - small) / (big_messages - small_messages)


def report_instructions() -> None:
    print(f"python {sys.version.split()[0]}, user-space instructions per message (callgrind)")
    print(f"{'variant':18} {'real':>8} {'seedbed':>8} {'real/seedbed':>13}")
    for variant in VARIANTS:
        real, sim = (instructions_per_message(variant, world) for world in ("real", "seedbed"))
        print(f"{variant:18} {real:8,.0f} {sim:8,.0f} {real / sim:12.2f}x")
    print("the real world's system calls run in the kernel, which callgrind does not count")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("VARIANT", "WORLD"))
    parser.add_argument("--size", help="internal: LINES,ROUND_TRIPS per peer for --one")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions per message instead"
    )
    args = parser.parse_args()
    if args.one:
        sizes = QUICK if args.quick else FULL
        if args.size:
            lines, trips = (int(part) for part in args.size.split(","))
            sizes = Sizes(lines, trips)
        one(args.one[0], args.one[1], sizes)
        return
    if args.instructions:
        report_instructions()
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, {args.runs} runs, "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    header = f"{'variant':18} {'real msg/s':>12} {'seedbed msg/s':>14} {'ratio':>6} "
    print(header + f"{'target':>7} {'virtual s/wall s':>17}")
    for variant in VARIANTS:
        rates: dict[str, list[float]] = {"real": [], "seedbed": []}
        virtual_rates: list[float] = []
        for _ in range(args.runs):
            for world in ("real", "seedbed"):
                result = measure(variant, world, args.quick)
                rates[world].append(result["messages"] / result["wall"])
                if world == "seedbed":
                    virtual_rates.append(result["virtual"] / result["wall"])
        real, sim = statistics.median(rates["real"]), statistics.median(rates["seedbed"])
        virtual = statistics.median(virtual_rates)
        print(f"{variant:18} {real:12,.0f} {sim:14,.0f} {sim / real:5.2f}x "
              f"{TARGETS[variant]:6.1f}x {virtual:17.1f}")  # fmt: skip
    print(
        f"targets: ratios as shown; request/response >= {TARGET_VIRTUAL_RATE:.0f} virtual s/wall s"
    )
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
