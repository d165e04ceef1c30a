"""The world verbs the nemesis injects through: links(), jump_clock, degrade/restore_disk."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import seedbed
from seedbed import Simulation, UsageError


def _talkers(sim: Simulation, seen: dict[str, Any]) -> None:
    """Host "a" sends a datagram to "b" every 0.1 s; "b" counts them."""

    class Counter(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: Any) -> None:
            seen["received"] = seen.get("received", 0) + 1

    async def receiver() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(Counter, local_addr=("0.0.0.0", 53))
        await asyncio.sleep(3600)

    async def sender() -> None:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("b", 53)
        )
        while True:
            transport.sendto(b"ping")
            await asyncio.sleep(0.1)

    sim.host("b", receiver)
    sim.host("a", sender)


def test_links_lists_each_link_with_its_state_and_the_traffic_waiting_at_it() -> None:
    seen: dict[str, Any] = {}
    sim = Simulation(seed=1)
    _talkers(sim, seen)
    sim.advance(0.5)
    assert ("a", "b", "open", 0) in sim.links()
    sim.hold("a", "b", one_way=True)
    sim.advance(0.5)
    held = {(link.src, link.dst): link for link in sim.links()}
    assert held[("a", "b")].state == "held" and held[("a", "b")].waiting >= 4
    count = len(sim.links())
    assert len(sim.links()) == count  # listing makes no link
    before = seen["received"]
    sim.release("a", "b", one_way=True)
    sim.advance(0.2)
    assert seen["received"] >= before + held[("a", "b")].waiting
    sim.partition("a", "b")
    assert {(link.src, link.dst, link.state) for link in sim.links()} >= {
        ("a", "b", "dropped"), ("b", "a", "dropped")
    }  # fmt: skip
    sim.run(max_time=5.0)


def _clock_reader(sim: Simulation, readings: list[tuple[float, float]]) -> None:
    async def reader() -> None:
        while True:
            readings.append((time.time(), time.monotonic()))
            await asyncio.sleep(1.0)

    sim.host("n1", reader)


def test_jump_clock_moves_one_nodes_wall_clock_and_never_its_monotonic_clock() -> None:
    readings: list[tuple[float, float]] = []
    sim = Simulation(seed=0)
    _clock_reader(sim, readings)
    sim.advance(2.5)
    assert sim.jump_clock("n1", -30.0) is True
    sim.advance(1.0)
    (wall_before, mono_before), (wall_after, mono_after) = readings[-2], readings[-1]
    assert mono_after - mono_before == pytest.approx(1.0, abs=1e-3)  # CPU costs: microseconds
    assert wall_after - wall_before == pytest.approx(1.0 - 30.0, abs=1e-3)
    sim.bounce("n1")  # the machine's clock: a restart keeps the jump
    sim.advance(0.5)
    assert readings[-1][0] - readings[-1][1] == pytest.approx(wall_after - mono_after)
    sim.crash("n1")
    assert sim.jump_clock("n1", 5.0) is False  # not running: nothing to jump
    sim.run(max_time=10.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda sim: sim.jump_clock("n1", float("nan")),
         "Simulation.jump_clock(seconds=...) must be a number of seconds in [-1e+09, 1e+09], "
         "got nan"),
        (lambda sim: sim.jump_clock("n1", "5"), "Simulation.jump_clock(seconds=...) must be"),
        (lambda sim: sim.jump_clock("n1", 2e9), "Simulation.jump_clock(seconds=...) must be"),
        (lambda sim: sim.jump_clock("zz", 1.0), "no node named 'zz' (nodes: n1)"),
        (lambda sim: sim.degrade_disk("n1", 0),
         "Simulation.degrade_disk(error_probability=...) must be a probability in (0, 1], got 0"),
        (lambda sim: sim.degrade_disk("n1", True), "Simulation.degrade_disk(error_probability="),
        (lambda sim: sim.degrade_disk("zz", 0.5), "no node named 'zz' (nodes: n1)"),
        (lambda sim: sim.restore_disk("zz"), "no node named 'zz' (nodes: n1)"),
    ],
)  # fmt: skip
def test_a_bad_verb_argument_is_refused_in_one_line(call: Any, message: str) -> None:
    sim = Simulation(seed=0)
    _clock_reader(sim, [])
    with pytest.raises(UsageError) as info:
        call(sim)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_degraded_disk_fails_until_restored_and_restore_counts_its_errors() -> None:
    outcomes: list[str] = []

    async def writer() -> None:
        while True:
            try:
                await seedbed.fs.write_file("data", b"x", durable=True)
                outcomes.append("ok")
            except OSError:
                outcomes.append("EIO")
            await asyncio.sleep(0.1)

    sim = Simulation(seed=3)
    sim.host("n1", writer)
    sim.advance(1.0)
    assert set(outcomes) == {"ok"}
    assert sim.degrade_disk("n1", 1.0) is True
    assert sim.degrade_disk("n1", 0.5) is False  # one degradation at a time
    outcomes.clear()
    sim.advance(1.0)
    assert set(outcomes) == {"EIO"}
    assert sim.restore_disk("n1") == len(outcomes)  # one error per failed write
    assert sim.restore_disk("n1") == 0  # not degraded any more
    outcomes.clear()
    sim.run(max_time=4.0)
    assert set(outcomes) == {"ok"}
