"""Reorder across two TCP connections: a price feed through a connection pool.

The feed publishes one symbol's price each time it changes (a market data
message may change it several times), through a pool of two
connections to the board, round robin, without waiting for replies. Each
connection keeps its own bytes in order, but nothing orders one against the
other: the later price can arrive first. The buggy board keeps the last
price it received; the correct one keeps the price with the highest
sequence number (last writer wins by version, not by arrival).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.quality.planted._defaults import options, run_world
from tests.quality.planted._net import until_hang_up

from seedbed import Simulation

PORT = 7200
MESSAGES = 4


def board(by_version: bool) -> Any:
    async def main() -> None:
        price = {"version": 0, "value": 0}

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                op, *args = line.decode().split()
                if op == "set":
                    version, value = int(args[0]), int(args[1])
                    if not by_version or version > price["version"]:
                        price.update(version=version, value=value)
                else:
                    writer.write(f"{price['value']}\n".encode())
                    await writer.drain()

        server = await asyncio.start_server(until_hang_up(handle), "0.0.0.0", PORT)
        await server.serve_forever()

    return main


async def feed() -> int:
    pool = [await asyncio.open_connection("board", PORT) for _ in range(2)]
    value, version = 0, 0
    for _message in range(MESSAGES):  # each market data message moves the price a few times
        for _tick in range(3):
            version += 1
            value = 1000 + version * 7 % 13
            _, writer = pool[version % len(pool)]
            writer.write(f"set {version} {value}\n".encode())
            await writer.drain()
        await asyncio.sleep(0.01)
    await asyncio.sleep(1.0)  # longer than any hop: every update has arrived
    reader, writer = pool[0]
    writer.write(b"get\n")
    shown = int(await reader.readline())
    assert shown == value, f"the board shows {shown}, the last price was {value}"
    for _, writer in pool:
        writer.close()
    return shown


def run(seed: int, buggy: bool) -> str | None:
    world = options()
    sim = Simulation(seed=seed, **world)
    sim.host("board", board(by_version=not buggy))
    sim.client("feed", feed)
    return run_world(sim, max_time=30.0)
