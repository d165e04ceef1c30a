"""Streams between simulated nodes behave like TCP."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from _netharness import World

from seedbed._core.identity import current_node
from seedbed.errors import UsageError
from seedbed.net import NetworkConfig


async def echo_server(port: int = 7000) -> asyncio.AbstractServer:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1000):
            writer.write(data)
            await writer.drain()
        writer.close()

    return await asyncio.start_server(handle, None, port)


def test_an_echo_round_trip_between_two_nodes() -> None:
    world = World(seed=1)

    async def client() -> bytes:
        reader, writer = await asyncio.open_connection("n1", 7000)
        writer.write(b"hello")
        data = await reader.readexactly(5)
        writer.close()
        return data

    async def main() -> bytes:
        await world.spawn("n1", echo_server())
        return await world.spawn("n2", client())

    assert world.run(main) == b"hello"


@pytest.mark.parametrize("seed", range(20))
def test_bytes_arrive_in_order_under_random_chunking(seed: int) -> None:
    # The light-tailed model: a latency spike holds later chunks behind it, and
    # a read then takes several at once (as from a real socket's buffer).
    config = NetworkConfig(stream_chunk_max=7, latency_model="exponential")
    world = World(seed=seed, config=config)
    payload = bytes(range(256)) * 20
    reads: list[int] = []

    async def receiver() -> bytes:
        done = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            received = bytearray()
            while data := await reader.read(100_000):
                reads.append(len(data))
                received += data
            done.set_result(bytes(received))

        await asyncio.start_server(handle, None, 7000)
        return await done

    async def sender() -> None:
        _, writer = await asyncio.open_connection("n2", 7000)
        for start in range(0, len(payload), 300):
            writer.write(payload[start : start + 300])
            if start % 900 == 0:
                await asyncio.sleep(0.0001)
        writer.close()

    async def main() -> bytes:
        got = world.spawn("n2", receiver())
        await asyncio.sleep(0.01)
        world.spawn("n1", sender())
        return await got

    assert world.run(main) == payload
    # Mostly one chunk a read; two chunks that arrived before the reader ran
    # (a drawn task order, a coarse clock) are read together, as from a socket.
    assert sorted(reads)[len(reads) // 2] <= 7 and len(reads) > len(payload) // 14


def test_close_delivers_eof_and_a_closed_port_refuses() -> None:
    world = World(seed=3)

    async def client() -> tuple[bytes, bool]:
        reader, writer = await asyncio.open_connection("n1", 7000)
        writer.write(b"bye")
        writer.write_eof()
        data = await reader.read()  # until EOF
        try:
            await asyncio.open_connection("n1", 7001)
        except ConnectionRefusedError:
            refused = True
        else:
            refused = False
        return data, refused

    async def main() -> tuple[bytes, bool]:
        await world.spawn("n1", echo_server())
        return await world.spawn("n2", client())

    assert world.run(main) == (b"bye", True)


def test_protocol_callbacks_run_in_the_receiving_node() -> None:
    world = World(seed=4)
    seen: list[tuple[str, str | None]] = []

    class Recorder(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            seen.append(("made", current_node()))
            self.transport = transport

        def data_received(self, data: bytes) -> None:
            seen.append(("data", current_node()))
            self.transport.write(data)  # type: ignore[attr-defined]

        def eof_received(self) -> None:
            seen.append(("eof", current_node()))

        def connection_lost(self, exc: Exception | None) -> None:
            seen.append(("lost", current_node()))

    async def server() -> None:
        await asyncio.get_running_loop().create_server(Recorder, port=9)

    async def client() -> bytes:
        reader, writer = await asyncio.open_connection("n1", 9)
        writer.write(b"x")
        data = await reader.readexactly(1)
        writer.close()
        await asyncio.sleep(0.1)
        return data

    async def main() -> bytes:
        await world.spawn("n1", server())
        return await world.spawn("n2", client())

    assert world.run(main) == b"x"
    assert [kind for kind, _ in seen] == ["made", "data", "eof", "lost"]
    assert {node for _, node in seen} == {"n1"}


def _line_reads(
    seed: int, config: NetworkConfig, lines: int = 200, drawn: list[int] | None = None
) -> list[int]:
    """Sizes of the reads a server sees for `lines` 10-byte lines sent one at a time;
    `drawn` gets the chunk fractions drawn and not yet used."""
    world = World(seed=seed, config=config)
    reads: list[int] = []

    async def receiver() -> None:
        done = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while data := await reader.read(100):
                reads.append(len(data))
            done.set_result(None)

        await asyncio.start_server(handle, None, 7000)
        await done

    async def sender() -> None:
        _, writer = await asyncio.open_connection("n2", 7000)
        for i in range(lines):
            writer.write(b"line %04d\n" % i)
            await asyncio.sleep(0.01)  # each line travels alone
        writer.close()

    async def main() -> None:
        got = world.spawn("n2", receiver())
        await asyncio.sleep(0.01)
        world.spawn("n1", sender())
        await got

    world.run(main)
    assert sum(reads) == 10 * lines
    if drawn is not None:
        drawn.extend(world.net._fabric.chunk_fractions)
    return reads


@pytest.mark.parametrize("seed", range(5))
def test_small_messages_are_sometimes_split_by_default(seed: int) -> None:
    partial = sum(1 for size in _line_reads(seed, NetworkConfig()) if size < 10)
    # 200 lines at 1 in 8: about 25 split, each read as two partial reads
    assert 10 <= partial // 2 <= 50


def test_split_probability_zero_delivers_each_message_whole() -> None:
    # light-tailed: under a spike, lines queue behind it and are read together
    config = NetworkConfig(stream_split_probability=0.0, latency_model="exponential")
    assert set(_line_reads(3, config)) == {10}


def test_split_probability_zero_draws_no_chunk_sizes() -> None:
    """A delivery on links that never split draws nothing (one batch serves 256 chunks)."""
    drawn: list[int] = []
    _line_reads(3, NetworkConfig(), drawn=drawn)
    assert 0 < len(drawn) < 256  # the default draws a batch and uses part of it
    drawn.clear()
    _line_reads(3, NetworkConfig(stream_split_probability=0.0), drawn=drawn)
    assert drawn == []


def test_split_probability_one_splits_most_messages() -> None:
    reads = _line_reads(3, NetworkConfig(stream_split_probability=1.0))
    assert sum(1 for size in reads if size < 10) > 250  # a split can still be whole (1 in 10)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "half", float("nan")])
def test_split_probability_must_be_a_probability(bad: object) -> None:
    with pytest.raises(UsageError, match="stream_split_probability must be a probability"):
        NetworkConfig(stream_split_probability=bad)  # type: ignore[arg-type]


def _collect_server(world: World, received: list[bytes]) -> Coroutine[Any, Any, Any]:
    """A server on n1:7000 that appends all it reads (to EOF) to `received`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read())
        writer.close()

    return asyncio.start_server(handle, None, 7000)


def test_writes_at_one_instant_keep_order_across_bytes_bytearray_and_memoryview() -> None:
    world = World(seed=5)
    received: list[bytes] = []

    async def client() -> None:
        _, writer = await asyncio.open_connection("n1", 7000)
        writer.write(b"a")
        writer.write(bytearray(b"bc"))
        writer.write(b"")
        writer.write(memoryview(b"xdex")[1:3])
        writer.write(b"f")
        writer.close()
        await asyncio.sleep(0.1)

    async def main() -> None:
        await world.spawn("n1", _collect_server(world, received))
        await world.spawn("n2", client())

    world.run(main)
    assert received == [b"abcdef"]


def test_a_write_after_write_eof_at_the_same_instant_raises() -> None:
    world = World(seed=6)
    received: list[bytes] = []

    async def client() -> str:
        _, writer = await asyncio.open_connection("n1", 7000)
        writer.write(b"one")
        writer.write_eof()
        try:
            writer.write(b"two")
        except RuntimeError as exc:
            outcome = str(exc)
        else:
            outcome = "accepted"
        await asyncio.sleep(0.1)
        return outcome

    async def main() -> str:
        await world.spawn("n1", _collect_server(world, received))
        return await world.spawn("n2", client())

    assert world.run(main) == "Cannot call write() after write_eof()"
    assert received == [b"one"]


def test_writes_after_close_or_abort_at_the_same_instant_are_dropped() -> None:
    world = World(seed=7)
    received: list[bytes] = []

    async def client(abort: bool) -> None:
        _, writer = await asyncio.open_connection("n1", 7000)
        writer.write(b"kept")
        if abort:
            writer.transport.abort()
        else:
            writer.close()
        writer.write(b"lost")
        await asyncio.sleep(0.1)

    async def main() -> None:
        await world.spawn("n1", _collect_server(world, received))
        await world.spawn("n2", client(abort=False))
        await world.spawn("n2", client(abort=True))

    world.run(main)
    assert received[0] == b"kept"
    assert b"lost" not in b"".join(received)
