"""A socket the program binds itself is served at its bound address (issue 42, item 8).

Modelled on aioquic's `connect()`: it binds its own dual-stack UDP socket to
`("::", 0, 0, 0)` and hands it to `create_datagram_endpoint(sock=...)`,
naming the server by its IPv4-mapped address. On a node that bind takes a
port of the node's simulated machine (nothing is bound for real) and the
endpoint made from the socket keeps it.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest

import seedbed

KEYCERT = Path(__file__).parents[1] / "conformance" / "loopback_keycert.pem"


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.received: asyncio.Queue[tuple[bytes, Any]] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.received.put_nowait((data, addr))


async def _udp_echo() -> None:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_datagram_endpoint(
        _Datagrams, local_addr=("0.0.0.0", 5000)
    )
    while True:
        data, source = await protocol.received.get()
        transport.sendto(data.upper(), source)


def test_a_dual_stack_udp_socket_names_ipv4_peers_as_mapped_addresses() -> None:
    async def client() -> tuple[Any, bytes, Any]:
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(("::", 0, 0, 0))
        name = sock.getsockname()
        transport, protocol = await loop.create_datagram_endpoint(_Datagrams, sock=sock)
        server = (await loop.getaddrinfo("server", 5000, type=socket.SOCK_DGRAM))[0][4]
        transport.sendto(b"hello", ("::ffff:" + server[0], server[1], 0, 0))
        data, source = await protocol.received.get()
        transport.close()
        return name, data, source

    sim = seedbed.Simulation(seed=3)
    sim.host("server", _udp_echo)
    sim.client("c1", client)
    name, data, source = sim.run(max_time=5.0).values["c1"]
    assert name[0] == "::" and name[1] >= 49152 and len(name) == 4
    assert data == b"HELLO"
    assert source == ("::ffff:10.0.0.1", 5000, 0, 0)


def test_a_bound_port_is_taken_until_closed_and_gone_with_a_crash() -> None:
    seen: list[Any] = []

    async def node() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind(("0.0.0.0", 7000))  # the second incarnation binds it again
            seen.append("bound")
        except OSError as exc:
            seen.append(exc.errno)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as clash:
            try:
                clash.bind(("0.0.0.0", 7000))
            except OSError as exc:
                seen.append(exc.errno)
        await asyncio.Event().wait()  # holds its socket open until the crash

    async def nemesis() -> None:
        await asyncio.sleep(1)
        sim.crash("n1")
        sim.restart("n1")
        await asyncio.sleep(1)

    sim = seedbed.Simulation(seed=1)
    sim.host("n1", node)
    sim.client("c1", nemesis)
    sim.run(max_time=5.0)
    assert seen == ["bound", errno.EADDRINUSE, "bound", errno.EADDRINUSE]


def test_a_tcp_socket_bound_then_connected_speaks_from_its_own_port() -> None:
    async def server() -> None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(repr(writer.get_extra_info("peername")).encode())
            writer.close()

        await asyncio.start_server(answer, "0.0.0.0", 8000)
        await asyncio.Event().wait()

    async def client() -> tuple[str, bytes]:
        await asyncio.sleep(0.1)
        loop = asyncio.get_running_loop()
        sock = socket.socket()
        sock.bind(("0.0.0.0", 40000))
        await loop.sock_connect(sock, ("server", 8000))
        reader, writer = await asyncio.open_connection(sock=sock)
        peer_saw = await reader.read()
        writer.close()
        return repr(writer.get_extra_info("sockname")), peer_saw

    sim = seedbed.Simulation(seed=2)
    sim.host("server", server)
    sim.client("c1", client)
    mine, theirs = sim.run(max_time=5.0).values["c1"]
    assert mine == "('10.0.0.2', 40000)"
    assert theirs == b"('10.0.0.2', 40000)"


def test_aioquic_connect_runs_unchanged_in_a_simulation() -> None:
    pytest.importorskip("aioquic", reason="aioquic is a dev dependency: `uv sync` installs it")
    from aioquic.asyncio import connect, serve
    from aioquic.asyncio.protocol import QuicConnectionProtocol
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.events import StreamDataReceived

    class Echo(QuicConnectionProtocol):
        def quic_event_received(self, event: Any) -> None:
            if isinstance(event, StreamDataReceived):
                data = event.data.upper()
                self._quic.send_stream_data(event.stream_id, data, end_stream=event.end_stream)
                self.transmit()

    async def server() -> None:
        config = QuicConfiguration(is_client=False, alpn_protocols=["echo"])
        config.load_cert_chain(KEYCERT, KEYCERT)
        await serve("::", 4433, configuration=config, create_protocol=Echo)
        await asyncio.Event().wait()

    async def client() -> bytes:
        await asyncio.sleep(0.01)
        config = QuicConfiguration(
            is_client=True, alpn_protocols=["echo"], verify_mode=ssl.CERT_NONE
        )
        async with connect("server", 4433, configuration=config) as protocol:
            reader, writer = await protocol.create_stream()
            writer.write(b"hello quic")
            writer.write_eof()
            return await reader.read()

    sim = seedbed.Simulation(seed=5)
    sim.host("server", server)
    sim.client("c1", client)
    assert sim.run(max_time=10.0).values["c1"] == b"HELLO QUIC"
