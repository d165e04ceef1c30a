"""Loopback in a plain loop (issue 31.3-3): servers on 127.0.0.1 without a Simulation.

Other people's test suites start an in-process server on loopback and talk
to it (aiohttp's TestServer and TestClient, an httpx client against a local
app). Inside `seedbed.run`, `new_event_loop` or `EventLoopPolicy` that
traffic runs over a one-node simulated network, on virtual time; any other
address, and a real socket used directly, still escapes.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

import seedbed


async def _echo_once(host: str, connect_to: str) -> dict[str, Any]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write((await reader.readline()).upper())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(handle, host, 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection(connect_to, port)
    writer.write(b"hello\n")
    await writer.drain()
    line = await reader.readline()
    facts = {
        "line": line,
        "server": server.sockets[0].getsockname(),
        "peer": writer.get_extra_info("peername"),
        "local": writer.get_extra_info("sockname"),
        "eof": await reader.read(),
    }
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    return facts


@pytest.mark.parametrize(
    ("host", "connect_to"),
    [("127.0.0.1", "127.0.0.1"), ("localhost", "localhost"), ("0.0.0.0", "127.0.0.1"),
     ("::1", "localhost"), (None, "127.0.0.1")],
)  # fmt: skip
def test_an_echo_server_on_loopback_runs_in_a_plain_run(host: str, connect_to: str) -> None:
    result = seedbed.run(lambda: _echo_once(host, connect_to), seed=1)
    facts = result.value
    assert facts["line"] == b"HELLO\n" and facts["eof"] == b""
    assert facts["server"] == ("127.0.0.1", 49152)  # port 0: the first ephemeral port
    assert facts["peer"] == ("127.0.0.1", 49152)
    assert facts["local"][0] == "127.0.0.1" and facts["local"][1] != 49152
    assert result.virtual_time > 0  # the traffic took simulated latency


def test_a_loopback_run_replays_to_the_same_trace() -> None:
    first = seedbed.run(lambda: _echo_once("127.0.0.1", "127.0.0.1"), seed=5)
    again = seedbed.run(lambda: _echo_once("127.0.0.1", "127.0.0.1"), seed=5)
    assert first.trace_hash == again.trace_hash and first.value == again.value


def test_new_event_loop_and_the_policy_serve_loopback_too() -> None:
    loop = seedbed.new_event_loop(seed=2)
    try:
        assert loop.run_until_complete(_echo_once("127.0.0.1", "localhost"))["line"] == b"HELLO\n"
    finally:
        loop.close()
    policy = seedbed.EventLoopPolicy(seed=2)
    with asyncio.Runner(loop_factory=policy.new_event_loop) as runner:
        assert runner.run(_echo_once("localhost", "127.0.0.1"))["line"] == b"HELLO\n"


def test_flow_control_holds_a_large_write_until_the_reader_reads() -> None:
    size = 4 * 1024 * 1024  # far past the simulated stream window

    async def main() -> tuple[int, bool]:
        got = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(1)  # the writer must wait for the window meanwhile
            got.set_result(len(await reader.readexactly(size)))
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        _, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        writer.write(b"x" * size)
        paused = writer.transport.get_write_buffer_size() > 0
        await writer.drain()
        count = await got
        writer.close()
        server.close()
        return count, paused

    count, paused = seedbed.run(main, seed=3).value
    assert count == size and paused


def test_datagrams_on_loopback() -> None:
    async def main() -> tuple[bytes, Any]:
        loop = asyncio.get_running_loop()
        received: asyncio.Future[tuple[bytes, Any]] = loop.create_future()

        class Sink(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: Any) -> None:
                received.set_result((data, addr))

        sink, _ = await loop.create_datagram_endpoint(Sink, local_addr=("127.0.0.1", 0))
        port = sink.get_extra_info("sockname")[1]
        sender, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("localhost", port)
        )
        sender.sendto(b"ping")
        value = await received
        sender.close()
        sink.close()
        return value

    data, source = seedbed.run(main, seed=1).value
    assert data == b"ping" and source[0] == "127.0.0.1"


def test_aiohttp_test_server_and_client_run_unchanged_on_virtual_time() -> None:
    async def main() -> tuple[int, Any, int]:
        async def slow(request: web.Request) -> web.Response:
            await asyncio.sleep(30)  # instant in virtual time
            return web.json_response({"x": request.query["x"]})

        app = web.Application()
        app.router.add_get("/", slow)
        async with TestClient(TestServer(app)) as client:
            response = await client.get("/", params={"x": "1"})
            return response.status, await response.json(), client.port or 0

    result = seedbed.run(main, seed=1)
    assert result.value == (200, {"x": "1"}, 49152)
    assert result.virtual_time >= 30


# -- what still escapes ------------------------------------------------------------


async def _connect(host: str) -> None:
    await asyncio.open_connection(host, 80)


@pytest.mark.parametrize("host", ["example.com", "10.0.0.1", "192.168.1.5", "8.8.8.8"])
def test_any_other_address_escapes_with_the_plain_loops_message(host: str) -> None:
    with pytest.raises(seedbed.SimulationEscape, match="this run has no simulated network"):
        seedbed.run(lambda: _connect(host), seed=1)


def test_a_server_on_another_address_escapes() -> None:
    async def main() -> None:
        await asyncio.start_server(lambda r, w: None, "192.168.1.5", 8080)

    with pytest.raises(seedbed.SimulationEscape, match=r"loop\.create_server\(\)"):
        seedbed.run(main, seed=1)


def test_a_real_socket_used_directly_still_escapes() -> None:
    async def connect() -> None:
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", 9))

    async def listen() -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))  # served: no port is taken for real...
            sock.listen()  # ...so it cannot listen for real

    with pytest.raises(seedbed.SimulationEscape, match=r"socket\.connect\(\)"):
        seedbed.run(connect, seed=1)
    with pytest.raises(seedbed.SimulationEscape, match=r"socket\.listen\(\)"):
        seedbed.run(listen, seed=1)


def test_a_bind_elsewhere_still_escapes() -> None:
    async def main() -> None:
        with socket.socket() as sock:
            sock.bind(("192.0.2.1", 0))

    with pytest.raises(seedbed.SimulationEscape, match=r"socket\.bind\(\)"):
        seedbed.run(main, seed=1)


def test_a_simulation_keeps_its_own_network() -> None:
    sim = seedbed.Simulation(seed=1)

    async def client() -> tuple[Any, Any, int]:
        facts = await _echo_once("127.0.0.1", "localhost")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))  # served on the node's own simulated ports
            name = sock.getsockname()
        with socket.socket() as sock:
            try:
                sock.bind(("10.0.0.9", 0))  # no node of this world's machine has it
            except OSError as exc:
                return facts["server"], name, exc.errno
        return facts["server"], name, 0

    sim.client("c1", client)
    server, name, refused = sim.run().values["c1"]
    assert server == ("10.0.0.1", 49152)
    assert name[0] == "127.0.0.1" and name[1] >= 49152
    assert refused == errno.EADDRNOTAVAIL
    world = seedbed.Simulation(seed=1)
    world.client("c1", lambda: _echo_once("127.0.0.1", "localhost"))
    assert world.run().values["c1"]["server"] == ("10.0.0.1", 49152)  # the node's address
