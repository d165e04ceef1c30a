"""The loop's last differences from stock asyncio (issue 42), one body on both loops.

Each test is modelled on a case that behaved one way on stock asyncio and
another on seedbed's loop: TLS over loopback (asyncio's `SSLProtocol` is a
`BufferedProtocol`), a timer due now while callbacks stay ready, a signal
sent to the process itself, a port bound and closed, bound again, the
class names in reprs and in asyncio's own reports.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import os
import signal
import socket
import ssl
from pathlib import Path
from typing import Any

from tests.conformance.conftest import Runner

KEYCERT = str(Path(__file__).with_name("loopback_keycert.pem"))  # CN=localhost, 127.0.0.1


def _tls_contexts() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(KEYCERT)
    client = ssl.create_default_context(cafile=KEYCERT)
    return server, client


def test_tls_streams_over_loopback_carry_data_both_ways(run: Runner) -> None:
    async def main() -> tuple[bytes, bytes, str | None]:
        server_tls, client_tls = _tls_contexts()

        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readline()
            body = await reader.readexactly(100_000)
            writer.write(head.upper() + str(body.count(b"x")).encode() + b"\n")
            await writer.drain()
            writer.close()
            await writer.wait_closed()

        server = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=server_tls)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=client_tls, server_hostname="localhost"
        )
        writer.write(b"hello over tls\n" + b"x" * 100_000)
        await writer.drain()
        first = await reader.readline()
        rest = await reader.read()  # the count, then the server's close
        version = writer.get_extra_info("ssl_object").version()
        writer.close()
        await writer.wait_closed()
        server.close()
        await server.wait_closed()
        return first, rest, version

    first, rest, version = run(main)
    assert first == b"HELLO OVER TLS\n"
    assert rest == b"100000\n"  # 100 kB arrived whole, in TLS records
    assert version is not None and version.startswith("TLS")


class _Collect(asyncio.BufferedProtocol):
    """A plain `BufferedProtocol`: no `data_received` at all, a small buffer."""

    def __init__(self, done: asyncio.Future[bytes]) -> None:
        self.buffer = bytearray(7)
        self.received = bytearray()
        self.done = done

    def get_buffer(self, sizehint: int) -> bytearray:
        return self.buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.received += self.buffer[:nbytes]

    def eof_received(self) -> None:
        self.done.set_result(bytes(self.received))


def test_a_buffered_protocol_receives_through_its_buffer(run: Runner) -> None:
    async def main() -> bytes:
        async def send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"0123456789" * 50)
            writer.write_eof()
            await writer.drain()
            await reader.read()  # the client's close
            writer.close()

        server = await asyncio.start_server(send, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bytes] = loop.create_future()
        transport, _ = await loop.create_connection(lambda: _Collect(done), "127.0.0.1", port)
        received = await done
        transport.close()
        server.close()
        await server.wait_closed()
        return received

    assert run(main) == b"0123456789" * 50


def test_a_timer_due_now_fires_while_callbacks_stay_ready(run: Runner) -> None:
    async def main() -> tuple[int, list[str]]:
        loop = asyncio.get_running_loop()
        fired: list[str] = []
        loop.call_later(0, fired.append, "later(0)")
        loop.call_at(loop.time() - 1, fired.append, "at(past)")
        rounds = 0
        while len(fired) < 2 and rounds < 1000:  # a task that keeps a callback ready
            await asyncio.sleep(0)
            rounds += 1
        return rounds, fired

    rounds, fired = run(main)
    assert fired == ["at(past)", "later(0)"]  # deadline order
    assert rounds <= 3  # stock: both after two sleep(0)s; never a whole clock tick later


def test_a_server_close_timeout_of_zero_fires_during_busy_work(run: Runner) -> None:
    """A close timeout of 0 aborts a connection while other work stays ready."""

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        events: list[str] = []
        stop = asyncio.Event()

        async def busy() -> None:
            while not stop.is_set():
                await asyncio.sleep(0)
            events.append("busy stopped")

        worker = asyncio.create_task(busy())
        await asyncio.sleep(0)
        handle = loop.call_later(0, lambda: (events.append("timeout"), stop.set()))
        await worker
        assert handle.when() <= loop.time()
        return events

    assert run(main) == ["timeout", "busy stopped"]


def test_a_port_bound_and_closed_is_free_to_bind_again(run: Runner) -> None:
    async def main() -> tuple[bool, int, bool]:
        with socket.socket() as probe:  # the "find a free port" idiom
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", port)
        listening = server.sockets[0].getsockname()[1] == port
        clash = 0
        with socket.socket() as other:
            try:
                other.bind(("127.0.0.1", port))
            except OSError as exc:
                clash = exc.errno
        server.close()
        await server.wait_closed()
        with socket.socket() as again:
            again.bind(("127.0.0.1", port))
            rebound = again.getsockname()[1] == port
        return listening, clash, rebound

    assert run(main) == (True, errno.EADDRINUSE, True)


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.received: asyncio.Queue[tuple[bytes, Any]] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.received.put_nowait((data, addr))


def test_a_udp_socket_the_program_binds_carries_datagrams(run: Runner) -> None:
    async def main() -> tuple[bytes, bool, bytes]:
        loop = asyncio.get_running_loop()
        server, server_side = await loop.create_datagram_endpoint(
            _Datagrams, local_addr=("127.0.0.1", 0)
        )
        server_address = server.get_extra_info("sockname")
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        own = sock.getsockname()
        client, client_side = await loop.create_datagram_endpoint(_Datagrams, sock=sock)
        client.sendto(b"ping", server_address)
        data, source = await server_side.received.get()
        server.sendto(data.upper(), source)
        answer, _ = await client_side.received.get()
        client.close()
        server.close()
        return data, tuple(source) == tuple(own), answer

    assert run(main) == (b"ping", True, b"PING")


def test_a_signal_the_process_sends_itself_runs_the_loops_handler(run: Runner) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        got: list[str] = []
        arrived = asyncio.Event()
        loop.add_signal_handler(signal.SIGUSR1, lambda: (got.append("usr1"), arrived.set()))
        loop.add_signal_handler(signal.SIGTERM, got.append, "term")
        try:
            os.kill(os.getpid(), signal.SIGUSR1)
            await asyncio.wait_for(arrived.wait(), 5)
            signal.raise_signal(signal.SIGTERM)
            for _ in range(5):
                await asyncio.sleep(0)
            got.append(str(loop.remove_signal_handler(signal.SIGTERM)))
            got.append(str(loop.remove_signal_handler(signal.SIGTERM)))
        finally:
            loop.remove_signal_handler(signal.SIGUSR1)
            loop.remove_signal_handler(signal.SIGTERM)
        return got

    assert run(main) == ["usr1", "term", "True", "False"]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_add_signal_handler_refuses_what_stock_refuses(run: Runner) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        refused = []
        for sig in (signal.SIGKILL, 0, 10_000):
            try:
                loop.add_signal_handler(sig, print)
            except (RuntimeError, ValueError) as exc:
                refused.append(type(exc).__name__)
        return refused

    assert run(main) == ["RuntimeError", "ValueError", "ValueError"]


def test_reprs_and_reports_name_stocks_classes(run: Runner) -> None:
    """A suite's test that matches "Task exception was never retrieved" in its logs
    (CPython's own do), or a repr, read seedbed's subclass names instead."""

    async def main() -> tuple[list[str], list[str]]:
        loop = asyncio.get_running_loop()
        reports: list[str] = []
        loop.set_exception_handler(lambda _, context: reports.append(context["message"]))

        async def fail() -> None:
            raise ValueError("nobody awaits this")

        task = loop.create_task(fail())
        future = loop.create_future()
        future.set_exception(KeyError("nor this"))
        timer, handle = loop.call_later(5, print), loop.call_soon(print)
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # and the loop's done callbacks (seedbed's watch) have run
        names = [repr(each).split()[0] for each in (task, future, timer, handle)]
        timer.cancel()
        handle.cancel()
        del task, future
        gc.collect()
        return names, sorted(reports)

    names, reports = run(main)
    assert names == ["<Task", "<Future", "<TimerHandle", "<Handle"]
    assert reports == ["Future exception was never retrieved", "Task exception was never retrieved"]
