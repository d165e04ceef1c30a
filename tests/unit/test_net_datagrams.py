"""Datagrams: lost, duplicated and reordered at the configured rates."""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest
from _netharness import World

from seedbed._core.identity import current_node
from seedbed.net import NetworkConfig

COUNT = 400


class Collector(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.received: list[int] = []
        self.nodes: set[str | None] = set()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.received.append(int(data))
        self.nodes.add(current_node())


def blast(seed: int, config: NetworkConfig) -> Collector:
    """n2 sends COUNT numbered datagrams to n1, one per millisecond."""
    world = World(seed=seed, config=config)
    collector = Collector()

    async def listen() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: collector, local_addr=("0.0.0.0", 5000))

    async def send() -> None:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("n1", 5000)
        )
        for i in range(COUNT):
            transport.sendto(b"%d" % i)
            await asyncio.sleep(0.0001)
        await asyncio.sleep(1)

    async def main() -> None:
        await world.spawn("n1", listen())
        await world.spawn("n2", send())

    world.run(main)
    return collector


def test_datagrams_arrive_in_the_receivers_context() -> None:
    collector = blast(0, NetworkConfig())
    assert sorted(collector.received) == list(range(COUNT))
    assert collector.nodes == {"n1"}


@pytest.mark.parametrize("seed", range(5))
def test_about_the_configured_share_of_datagrams_is_lost(seed: int) -> None:
    collector = blast(seed, NetworkConfig(loss_probability=0.3))
    lost = COUNT - len(set(collector.received))
    assert 0.2 * COUNT <= lost <= 0.4 * COUNT
    assert len(collector.received) == len(set(collector.received))  # no duplicates


def test_datagrams_are_duplicated_and_reordered_across_seeds() -> None:
    duplicated = reordered = 0
    for seed in range(5):
        received = blast(seed, NetworkConfig(duplicate_probability=0.2)).received
        copies = len(received) - len(set(received))
        assert 0.1 * COUNT <= copies <= 0.3 * COUNT
        duplicated += copies > 0
        reordered += any(b < a for a, b in pairwise(received))
    assert duplicated == 5 and reordered == 5


def test_a_partition_drops_datagrams_and_a_hold_delays_them() -> None:
    world = World(seed=1)
    collector = Collector()

    async def listen() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: collector, local_addr=("n1", 5000))

    async def send() -> list[int]:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol)
        world.net.partition("n2", "n1")
        transport.sendto(b"1", ("n1", 5000))
        await asyncio.sleep(1)
        world.net.repair("n2", "n1")
        world.net.hold("n2", "n1")
        transport.sendto(b"2", ("10.0.0.1", 5000))
        await asyncio.sleep(1)
        seen_during_hold = list(collector.received)
        world.net.release("n2", "n1")
        await asyncio.sleep(1)
        return seen_during_hold

    async def main() -> list[int]:
        await world.spawn("n1", listen())
        return await world.spawn("n2", send())

    assert world.run(main) == []
    assert collector.received == [2]
