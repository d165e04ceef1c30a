"""Crashes, partitions, holds and latency: the faults the network injects."""

from __future__ import annotations

import asyncio

import pytest
from _netharness import World

from seedbed.errors import UsageError
from seedbed.net import NetworkConfig


async def sink_server(port: int, received: list[bytes]) -> asyncio.AbstractServer:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1000):
            received.append(data)
            writer.write(data)

    return await asyncio.start_server(handle, None, port)


async def outcome(awaitable: object) -> str:
    try:
        result = await awaitable  # type: ignore[misc]
    except (OSError, asyncio.IncompleteReadError) as exc:
        return type(exc).__name__
    return repr(result)


def test_a_crash_resets_the_peer_and_removes_the_listening_port() -> None:
    world = World(seed=2)

    async def client() -> tuple[str, str]:
        reader, writer = await asyncio.open_connection("n1", 7000)
        writer.write(b"ping")
        await reader.readexactly(4)
        world.crash("n1")
        reset = await outcome(reader.read(100))
        refused = await outcome(asyncio.open_connection("n1", 7000))
        return reset, refused

    async def main() -> tuple[str, str]:
        await world.spawn("n1", sink_server(7000, []))
        return await world.spawn("n2", client())

    assert world.run(main) == ("ConnectionResetError", "ConnectionRefusedError")


@pytest.mark.parametrize("seed", range(5))
def test_each_delivery_takes_a_latency_between_min_and_max(seed: int) -> None:
    config = NetworkConfig(  # the light-tailed model: no spike past the cap
        latency_min=0.01, latency_mean=0.02, latency_max=0.05, latency_model="exponential"
    )
    world = World(seed=seed, config=config)
    delays: list[float] = []

    async def client() -> None:
        reader, writer = await asyncio.open_connection("n1", 7000)
        for _ in range(50):
            sent = world.now()
            writer.write(b"x")
            await reader.readexactly(1)
            delays.append(world.now() - sent)  # a round trip: two hops

    async def main() -> None:
        await world.spawn("n1", sink_server(7000, []))
        await world.spawn("n2", client())

    world.run(main)
    assert all(0.02 <= delay <= 0.1 + 0.001 for delay in delays), delays
    assert len({round(delay, 6) for delay in delays}) > 10  # drawn, not constant


def test_a_partition_stalls_a_stream_then_resets_it_and_connects_time_out() -> None:
    config = NetworkConfig(partition_reset_timeout=5.0, connect_timeout=2.0)
    world = World(seed=3, config=config)

    async def client() -> tuple[str, float, str, float]:
        reader, writer = await asyncio.open_connection("n1", 7000)
        world.net.partition("n1", "n2")
        start = world.now()
        writer.write(b"lost?")
        reset = await outcome(reader.read(100))
        reset_after = world.now() - start
        start = world.now()
        timed_out = await outcome(asyncio.open_connection("n1", 7000))
        return reset, reset_after, timed_out, world.now() - start

    async def main() -> tuple[str, float, str, float]:
        await world.spawn("n1", sink_server(7000, []))
        return await world.spawn("n2", client())

    reset, reset_after, timed_out, timeout_after = world.run(main)
    assert reset == "ConnectionResetError" and 5.0 <= reset_after < 5.1
    assert timed_out == "TimeoutError" and 2.0 <= timeout_after < 2.01


def test_a_repaired_partition_delivers_what_waited() -> None:
    world = World(seed=4)
    received: list[bytes] = []

    async def client() -> bytes:
        reader, writer = await asyncio.open_connection("n1", 7000)
        world.net.partition("n1", "n2")
        writer.write(b"patience")
        await asyncio.sleep(3)
        assert received == []
        world.net.repair("n1", "n2")
        return await reader.readexactly(8)

    async def main() -> bytes:
        await world.spawn("n1", sink_server(7000, received))
        return await world.spawn("n2", client())

    assert world.run(main) == b"patience"


def test_a_one_way_partition_lets_the_other_direction_through() -> None:
    world = World(seed=5)
    received: list[bytes] = []

    async def client() -> tuple[list[bytes], str]:
        reader, writer = await asyncio.open_connection("n1", 7000)
        world.net.partition("n1", "n2", one_way=True)  # n1 -> n2 dropped
        writer.write(b"up")
        await asyncio.sleep(1)
        echoed = await outcome(asyncio.wait_for(reader.readexactly(2), 1))
        return [b"".join(received)], echoed

    async def main() -> tuple[list[bytes], str]:
        await world.spawn("n1", sink_server(7000, received))
        return await world.spawn("n2", client())

    assert world.run(main) == ([b"up"], "TimeoutError")


@pytest.mark.parametrize("seed", range(5))
def test_hold_queues_traffic_and_release_delivers_it_in_order(seed: int) -> None:
    world = World(seed=seed, config=NetworkConfig(stream_chunk_max=3))
    received: list[bytes] = []

    async def client() -> bytes:
        reader, writer = await asyncio.open_connection("n1", 7000)
        world.net.hold("n2", "n1")
        for i in range(20):
            writer.write(b"%02d," % i)
            await asyncio.sleep(0.001)
        await asyncio.sleep(60)  # longer than any reset timeout: a hold never resets
        assert received == []
        world.net.release("n2", "n1")
        return await reader.readexactly(60)

    async def main() -> bytes:
        await world.spawn("n1", sink_server(7000, received))
        return await world.spawn("n2", client())

    expected = b"".join(b"%02d," % i for i in range(20))
    assert world.run(main) == expected
    assert b"".join(received) == expected


def test_isolate_cuts_a_node_off_and_heal_restores_it() -> None:
    world = World(seed=6, config=NetworkConfig(connect_timeout=1.0), names=("a", "b", "c"))

    async def try_connect(host: str) -> str:
        return await outcome(asyncio.open_connection(host, 7000))

    async def main() -> list[str]:
        for name in ("a", "b", "c"):
            await world.spawn(name, sink_server(7000, []))
        world.net.isolate("a")
        results = [
            await world.spawn("b", try_connect("a")),
            await world.spawn("b", try_connect("c")),
        ]
        world.net.heal()
        results.append(await world.spawn("b", try_connect("a")))
        return ["ok" if result.startswith("(") else result for result in results]

    assert world.run(main) == ["TimeoutError", "ok", "ok"]


def test_random_halves_split_the_nodes_by_seed() -> None:
    names = ("a", "b", "c", "d", "e")
    splits = set()
    for seed in range(10):
        world = World(seed=seed, names=names)
        first, second = world.net.random_halves()
        assert sorted(first + second) == list(names) and len(first) == 2
        links = world.net._fabric.links
        assert all(links.get(x, y).state != 0 for x in first for y in second)
        assert all(links.get(x, y).state == 0 for x in first for y in first if x != y)
        splits.add(tuple(first))
    assert len(splits) > 3


@pytest.mark.parametrize(
    ("field", "value"),
    [("latency_min", -1), ("loss_probability", 1.5), ("stream_window", 0), ("connect_timeout", 0)],
)
def test_a_bad_setting_is_refused_naming_the_field_and_value(field: str, value: float) -> None:
    with pytest.raises(UsageError, match=rf"^NetworkConfig\.{field} must be .*, got {value}$"):
        NetworkConfig(**{field: value})


def test_latency_settings_must_be_ordered() -> None:
    with pytest.raises(
        UsageError, match=r"latency_mean must be >= latency_min \(0\.01\), got 0\.001"
    ):
        NetworkConfig(latency_min=0.01, latency_mean=0.001)
    with pytest.raises(
        UsageError, match=r"latency_max must be >= latency_mean \(0\.01\), got 0\.005"
    ):
        NetworkConfig(latency_mean=0.01)


def _timed_connect(world: World, heal_after: float, heal: str, block: str) -> tuple[str, float]:
    """Connect n2 -> n1 across a link `block`ed ("hold" or "partition") from the
    start; `heal` it after `heal_after` s. Returns the outcome and when it came."""

    async def client() -> tuple[str, float]:
        getattr(world.net, block)("n2", "n1")
        start = world.now()

        async def heal_later() -> None:
            await asyncio.sleep(heal_after)
            getattr(world.net, heal)("n2", "n1")

        healer = asyncio.create_task(heal_later())
        result = await outcome(asyncio.open_connection("n1", 7000))
        took = world.now() - start
        await healer
        await asyncio.sleep(1)
        return ("connected" if result.startswith("(") else result), took

    async def main() -> tuple[str, float]:
        await world.spawn("n1", sink_server(7000, []))
        return await world.spawn("n2", client())

    return world.run(main)  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(3))
def test_a_connect_into_a_hold_completes_when_the_hold_is_released(seed: int) -> None:
    exact = NetworkConfig(connect_timeout=10.0, stall_per_second=0.0)  # timed to the hop
    world = World(seed=seed, config=exact)
    result, took = _timed_connect(world, 2.0, "release", "hold")
    assert result == "connected" and 2.0 < took < 2.011  # release, then one hop each way


@pytest.mark.parametrize(("repair_after", "retransmit"), [(0.5, 1.0), (2.0, 3.0), (5.0, 7.0)])
def test_a_connect_across_a_repaired_partition_gets_through_on_a_syn_retransmission(
    repair_after: float, retransmit: float
) -> None:
    exact = NetworkConfig(connect_timeout=10.0, stall_per_second=0.0)  # timed to the hop
    world = World(seed=2, config=exact)
    result, took = _timed_connect(world, repair_after, "repair", "partition")
    assert result == "connected" and retransmit < took < retransmit + 0.011


def test_a_hold_outlasting_the_connect_timeout_times_out_and_its_release_opens_nothing() -> None:
    world = World(seed=3, config=NetworkConfig(connect_timeout=2.0))
    accepted: list[str] = []

    async def client() -> tuple[str, float]:
        world.net.hold("n2", "n1")
        start = world.now()
        result = await outcome(asyncio.open_connection("n1", 7000))
        took = world.now() - start
        await asyncio.sleep(3)
        world.net.release("n2", "n1")
        await asyncio.sleep(1)
        return result, took

    async def server() -> asyncio.AbstractServer:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append("accepted")

        return await asyncio.start_server(handle, None, 7000)

    async def main() -> tuple[str, float]:
        await world.spawn("n1", server())
        return await world.spawn("n2", client())

    result, took = world.run(main)
    assert result == "TimeoutError" and 2.0 <= took < 2.001
    assert accepted == []
