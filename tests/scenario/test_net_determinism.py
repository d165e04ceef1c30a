"""A networked program is a function of its seed: same hash in and across processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from _netharness import World

from seedbed.net import NetworkConfig


def network_program(seed: int) -> str:
    """Streams with chunking, lossy datagrams, a partition and an HTTP request."""
    config = NetworkConfig(stream_chunk_max=16, loss_probability=0.2, duplicate_probability=0.1)
    world = World(seed=seed, config=config, names=("a", "b", "c"))

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(100):
            writer.write(data)

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def server() -> None:
        app = web.Application()
        app.router.add_get("/", ok)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, None, 80).start()
        await asyncio.start_server(echo, None, 7)
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(asyncio.DatagramProtocol, local_addr=(None, 9))

    async def client(name: str) -> None:
        reader, writer = await asyncio.open_connection("a", 7)
        transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("a", 9)
        )
        for i in range(30):
            writer.write(f"{name}:{i};".encode() * 3)
            transport.sendto(b"%d" % i)
            await reader.read(1000)
        async with aiohttp.ClientSession() as session, session.get("http://a/") as response:
            await response.text()

    async def main() -> None:
        await world.spawn("a", server())
        clients = [world.spawn(name, client(name)) for name in ("b", "c")]
        await asyncio.sleep(0.01)
        world.net.hold("a", "c")
        await asyncio.sleep(0.05)
        world.net.release("a", "c")
        await asyncio.gather(*clients)

    world.run(main)
    return world.loop.trace.hash


def test_the_same_seed_gives_the_same_hash_and_other_seeds_differ() -> None:
    assert network_program(11) == network_program(11)
    assert len({network_program(seed) for seed in range(4)}) == 4


def test_the_hash_is_the_same_in_fresh_processes_under_other_hash_seeds() -> None:
    here = Path(__file__).resolve()
    code = (
        f"import sys; sys.path.insert(0, {str(here.parent)!r}); "
        f"import {here.stem} as m; print(m.network_program(11))"
    )
    hashes = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        hashes.add(done.stdout.split()[-1])
    assert hashes == {network_program(11)}
