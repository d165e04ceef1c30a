"""What a command costs on the Redis stand-in, against a plain stream echo (issue 47).

One round is a request and its reply over a simulated TCP stream, on the
network's default links, in four setups:

- `echo`: asyncio streams, a 30-byte line echoed (what any message costs);
- `resp`: unmodified `redis.asyncio` against a hand-written server that
  answers every command "+OK" (the client's own cost, and RESP framing);
- `redis`: `redis.asyncio` SET then GET against `seedbed.services.Redis`
  with its defaults (a drawn service time, appendfsync="everysec");
- `redis-bare`: the same with no service time and no append-only file (the
  command model alone).

Callgrind counts two sizes of each in fresh processes and prints the
difference per command, so start-up and imports cancel out; the ratios
are against `echo`. `--wall` times the same runs instead (noisy, no valgrind).

    PYTHONHASHSEED=0 python bench/services_redis.py [--wall] [--setups resp,redis]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _callgrind import count_with_output

SETUPS = ("echo", "resp", "redis", "redis-bare")
SMALL, LARGE = 40, 240  # rounds of two commands (SET, GET) each; echo: two lines


def workload(setup: str, rounds: int) -> None:
    """Run `rounds` rounds of two commands in `setup`; print the loop steps taken."""
    import asyncio

    import redis.asyncio as aredis

    import seedbed
    from seedbed.services import Redis

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            writer.write(line)
            await writer.drain()

    async def ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(b"+OK\r\n" * data.count(b"*"))  # one reply per command array
            await writer.drain()

    async def plain_server() -> None:
        await asyncio.start_server(echo if setup == "echo" else ok, None, 6379)

    async def client() -> None:
        await asyncio.sleep(0.01)
        if setup == "echo":
            reader, writer = await asyncio.open_connection("redis", 6379)
            for _ in range(2 * rounds):
                writer.write(b"SET key value-of-twenty-bytes\n")
                await writer.drain()
                await reader.readline()
            return
        r = aredis.Redis(host="redis", port=6379)
        for i in range(rounds):
            await r.set("key", i)
            await r.get("key")
        await r.aclose()

    sim = seedbed.Simulation(seed=1)
    if setup in ("echo", "resp"):
        sim.host("redis", plain_server)
    elif setup == "redis":
        sim.host("redis", Redis())
    else:
        sim.host("redis", Redis(appendonly=False, latency_min=0.0, latency_max=0.0))
    sim.client("app", client)
    start = time.perf_counter()
    steps = sim.run(max_time=100_000.0).steps
    print(time.perf_counter() - start, steps)  # the run alone: not imports or start-up


def per_command(setup: str) -> tuple[float, float]:
    """(instructions, loop steps) per command of `setup`, by the difference of two sizes."""
    small, small_out = count_with_output([__file__, "--child", setup, str(SMALL)])
    large, large_out = count_with_output([__file__, "--child", setup, str(LARGE)])
    commands = 2 * (LARGE - SMALL)
    steps = int(large_out.split()[-1]) - int(small_out.split()[-1])
    return (large - small) / commands, steps / commands


def wall_per_command(setup: str) -> tuple[float, float]:
    """(microseconds, loop steps) per command: each run timed inside its fresh
    process (the run alone), the two sizes' medians of 3 differenced."""
    runs: dict[int, list[tuple[float, int]]] = {SMALL: [], LARGE: []}
    for rounds in (SMALL, LARGE) * 3:
        out = subprocess.run(
            [sys.executable, __file__, "--child", setup, str(rounds)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        seconds, steps = out.stdout.split()[-2:]
        runs[rounds].append((float(seconds), int(steps)))
    small, large = (sorted(runs[size])[1] for size in (SMALL, LARGE))
    commands = 2 * (LARGE - SMALL)
    return (large[0] - small[0]) / commands * 1e6, (large[1] - small[1]) / commands


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        workload(sys.argv[2], int(sys.argv[3]))
        return
    wall = "--wall" in sys.argv
    measure = wall_per_command if wall else per_command
    unit = "microseconds" if wall else "instructions"
    chosen = SETUPS
    if "--setups" in sys.argv:  # e.g. --setups echo,redis (echo is always measured)
        chosen = ("echo", *sys.argv[sys.argv.index("--setups") + 1].split(","))
    results = {setup: measure(setup) for setup in dict.fromkeys(chosen)}
    base = results["echo"][0]
    print(f"per command (request and reply), {2 * (LARGE - SMALL)} commands:")
    print(f"| setup | {unit} | x echo | loop steps |")
    print("|---|---|---|---|")
    for setup, (cost, steps) in results.items():
        print(f"| {setup} | {cost:,.0f} | {cost / base:.1f} | {steps:.1f} |")


if __name__ == "__main__":
    main()
