"""The network's own rules (issue 22): break one through the internals and the
run fails with a SimulatorBug that names the rule and the seed.

Each test corrupts one piece of simulator state a user's program cannot reach
(a pipe's counters, a link's state, a port table, the address book) and then
does something ordinary; the contract that states the rule must catch it.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from _netharness import World

from seedbed.errors import SimulatorBug
from seedbed.net import _datagram
from seedbed.net._links import DROPPED
from seedbed.net._stream import StreamEndpoint

SEED = 41


def broken_rule(world: World, main: Callable[[], Coroutine[Any, Any, Any]], rule: str) -> None:
    """Run `main`; it must fail with the SimulatorBug for `rule`, stamped with the seed."""
    with pytest.raises(SimulatorBug) as caught:
        world.run(main)
    assert rule in str(caught.value)
    assert caught.value.seed == SEED
    assert caught.value.replay
    _settle(world)


def _settle(world: World) -> None:
    """Mark every end closed, so finalizers closing the corrupted ones do nothing."""
    for owned in world.net._fabric.endpoints.values():
        for end in owned.values():
            end.closing = True
            if isinstance(end, StreamEndpoint):
                end.lost = True
    gc.collect()  # now, inside this test, not in some later one


def on(
    world: World, name: str, body: Callable[[], Coroutine[Any, Any, None]]
) -> Callable[[], Coroutine[Any, Any, None]]:
    """A main that runs `body` on node `name`."""

    async def main() -> None:
        await world.spawn(name, body())

    return main


async def sink(port: int = 7000) -> asyncio.AbstractServer:
    """A server that reads everything and answers nothing."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(1000):
            pass

    return await asyncio.start_server(handle, None, port)


async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter, StreamEndpoint]:
    reader, writer = await asyncio.open_connection("n1", 7000)
    transport = writer.transport
    assert isinstance(transport, StreamEndpoint)
    return reader, writer, transport


Body = Callable[[StreamEndpoint, asyncio.StreamWriter], Coroutine[Any, Any, None]]


def client_world(body: Body) -> tuple[World, Callable[[], Coroutine[Any, Any, None]]]:
    """A world where n2 connects to a sink on n1 and runs `body` with its end."""
    world = World(seed=SEED)

    async def client() -> None:
        _, writer, end = await connect()
        await body(end, writer)

    async def main() -> None:
        await world.spawn("n1", sink())
        await world.spawn("n2", client())

    return world, main


# -- _pipe --------------------------------------------------------------------


def test_a_pipe_whose_sent_counter_runs_ahead_of_its_buffer_is_a_simulator_bug() -> None:
    async def body(end: StreamEndpoint, writer: asyncio.StreamWriter) -> None:
        writer.write(b"first")
        end.outgoing.sent += 3  # three bytes "sent" that the buffer never got
        writer.write_eof()  # the sender queues its FIN: the counters must add up

    broken_rule(*client_world(body), "a pipe buffers exactly sent - delivered bytes")


def test_a_pipe_holding_bytes_nobody_sent_fails_at_delivery() -> None:
    async def body(end: StreamEndpoint, writer: asyncio.StreamWriter) -> None:
        writer.write(b"first")
        end.outgoing.data += b"??"  # the receiver's side finds them
        await asyncio.sleep(1)

    broken_rule(*client_world(body), "a delivery hands over buffered bytes")


def test_a_segment_that_would_overtake_the_one_ahead_is_a_simulator_bug() -> None:
    async def body(end: StreamEndpoint, writer: asyncio.StreamWriter) -> None:
        writer.write(b"first")
        end.outgoing.marks[-1][1] += 100  # the segment ahead claims offsets not yet sent
        await asyncio.sleep(0)
        writer.write(b"second")  # a new instant: a new segment behind it

    broken_rule(*client_world(body), "a segment follows the one ahead on its connection")


def test_a_stalled_pipe_that_schedules_a_delivery_is_a_simulator_bug() -> None:
    async def body(end: StreamEndpoint, writer: asyncio.StreamWriter) -> None:
        writer.write(b"late")  # its delivery is scheduled
        pipe = end.outgoing
        pipe.stalled = True  # "waiting at a closed link" while the link is open
        pipe.marks[0][0] += 10**9  # and the segment is not due when the timer fires
        await asyncio.sleep(1)

    broken_rule(*client_world(body), "a pipe waiting at a closed link schedules no delivery")


# -- _links --------------------------------------------------------------------


def test_a_link_closed_behind_the_verbs_back_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def main() -> None:
        links = world.net._fabric.links
        links._set(links.get("n1", "n2"), DROPPED)  # no verb named this link

    broken_rule(world, main, "a link is closed only by a verb that names it")


def test_a_hand_cut_that_a_pattern_reopens_is_a_simulator_bug() -> None:
    world = World(seed=SEED, names=("n1", "n2", "n3"))

    async def main() -> None:
        world.net.isolate("n1")
        world.net._fabric.links._by_hand[("n1", "n2")] = None  # both a pattern's and by hand
        world.net.isolate("n3")  # reopens what the last pattern cut

    broken_rule(world, main, "a link cut by name opens only by name")


# -- _datagram ---------------------------------------------------------------------


class Quiet(asyncio.DatagramProtocol):
    pass


def test_a_datagram_arriving_more_often_than_it_was_sent_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def node() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(Quiet, local_addr=("n1", 9000))
        fabric = world.net._fabric
        link = fabric.links.get("n2", "n1")
        copies_left = [0]  # every copy of this datagram has already arrived
        _datagram._arrive(fabric, link, ("10.0.0.2", 9), "n1", 9000, b"again", copies_left)

    broken_rule(world, on(world, "n1", node), "a datagram arrives at most as often")


def test_a_datagram_from_an_endpoint_that_lost_its_port_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def node() -> None:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(Quiet, local_addr=("n2", 9000))
        del world.net._fabric.datagram_ports._taken[("n2", 9000)]  # the table forgot it
        transport.sendto(b"hi", ("n1", 9000))

    broken_rule(world, on(world, "n2", node), "a datagram leaves only from")


# -- _connect, _server ---------------------------------------------------------


def test_a_listener_found_at_a_port_it_is_not_bound_to_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def client() -> None:
        ports = world.net._fabric.stream_ports
        ports._taken[("n1", 7001)] = ports.get("n1", 7000)  # one listener under two ports
        await asyncio.open_connection("n1", 7001)

    async def main() -> None:
        await world.spawn("n1", sink())
        await world.spawn("n2", client())

    broken_rule(world, main, "the listener at a (node, port) is the live one bound there")


def test_a_listener_that_lost_its_port_while_listening_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def main() -> None:
        server = await world.spawn("n1", sink())
        del world.net._fabric.stream_ports._taken[("n1", 7000)]  # the table forgot it
        server.accepting()  # what the network asks a listener it finds

    broken_rule(world, main, "a listening server holds its port")


# -- _addresses, _network ----------------------------------------------------------


def test_an_address_that_resolves_to_another_node_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def node() -> None:
        world.net._fabric.addresses._by_address["10.0.0.1"] = "n2"  # n1's address, misfiled
        await asyncio.open_connection("10.0.0.1", 7000)

    broken_rule(world, on(world, "n2", node), "an address resolves back")


def test_a_crashed_node_that_keeps_a_port_is_a_simulator_bug() -> None:
    world = World(seed=SEED)

    async def main() -> None:
        await world.spawn("n1", sink())
        world.net._fabric.stream_ports._taken[("n1", 7999)] = object()  # a leaked binding
        world.crash("n1")

    broken_rule(world, main, "a crashed node keeps no port")


# -- _stream --------------------------------------------------------------------------


def test_a_negative_write_backlog_is_a_simulator_bug() -> None:
    async def body(end: StreamEndpoint, writer: asyncio.StreamWriter) -> None:
        end.outgoing.delivered = end.outgoing.sent + 10  # more delivered than sent
        end.get_write_buffer_size()

    broken_rule(*client_world(body), "a write buffer's size is never negative")


def test_the_contracts_leave_a_healthy_run_alone() -> None:
    """The same world, uncorrupted, runs to the end: the checks only watch."""

    async def body(end: StreamEndpoint, writer: asyncio.StreamWriter) -> None:
        for _ in range(3):
            writer.write(b"first")
            await asyncio.sleep(0)
            writer.write(b"second")
            await writer.drain()
        assert end.get_write_buffer_size() >= 0
        writer.close()

    world, main = client_world(body)
    world.run(main)
