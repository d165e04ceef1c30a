"""Faults at operations: a node crashed just before or just after its n-th fsync,
write, rename, send, receive or connect (`Simulation.crash_at_operation`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

import seedbed
from seedbed import DiskConfig, FaultProfile, Scenario, Simulation, UsageError, fs

LOG = "/log"


def _logger(seen: dict[str, Any], records: list[bytes]) -> Any:
    """A host that creates /log durably, then appends and fsyncs each record,
    noting after each fsync how many records it believes durable."""

    async def main() -> None:
        if not seen.get("started"):
            seen["started"] = True
            await fs.write_file(LOG, b"", durable=True)
            seen["ready"] = True
            await asyncio.sleep(1.0)  # the test arms its crash meanwhile
            async with await fs.open(LOG, "a") as f:
                for n, record in enumerate(records, 1):
                    await f.write(record)
                    await f.fsync()
                    seen["acked"] = n
            return
        seen["after restart"] = await fs.read_file(LOG)
        await asyncio.sleep(3600)

    return main


def _run_logger(after: bool, count: int, operation: str = "fsync") -> dict[str, Any]:
    seen: dict[str, Any] = {}
    records = [b"first-record\n", b"second-record\n", b"third-record\n"]
    # Every unsynced sector is lost at the crash: what is left is what was synced.
    sim = Simulation(seed=1, disk=DiskConfig(torn_sector_probability=1.0))
    sim.host("n1", _logger(seen, records))
    sim.advance(0.5)
    assert seen.get("ready") and sim.crash_at_operation("n1", operation, after=after, count=count)
    sim.advance(1.0)
    seen["up"] = sim.nodes.get("n1").up
    seen["fired"] = sim.disarm_operation("n1")
    sim.restart("n1")
    sim.advance(1.0)
    sim.run(max_time=sim.loop.time())  # end it: nothing left pending
    return seen


def test_a_crash_just_after_the_first_fsync_leaves_exactly_the_synced_data() -> None:
    seen = _run_logger(after=True, count=1)
    assert seen["fired"] and not seen["up"]
    assert seen["after restart"] == b"first-record\n"
    assert "acked" not in seen  # it died before running the line after its fsync


def test_a_crash_just_before_the_second_fsync_loses_the_unsynced_record() -> None:
    seen = _run_logger(after=False, count=2)
    assert seen["fired"] and seen["acked"] == 1
    assert seen["after restart"].rstrip(b"\0") == b"first-record\n"


def test_a_crash_just_before_a_write_writes_nothing() -> None:
    seen = _run_logger(after=False, count=1, operation="write")
    assert seen["fired"] and seen["after restart"] == b""


def test_an_unarmed_or_disarmed_node_runs_to_the_end() -> None:
    seen = _run_logger(after=True, count=9)  # only three fsyncs come
    assert not seen["fired"] and seen["up"] and seen["acked"] == 3


def _messenger(sim: Simulation, got: list[bytes]) -> None:
    async def server() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionResetError):
                while line := await reader.readline():
                    got.append(line)

        await asyncio.start_server(handle, "0.0.0.0", 7000)
        await asyncio.sleep(3600)

    async def sender() -> None:
        await asyncio.sleep(1.0)
        _, writer = await asyncio.open_connection("n2", 7000)
        for n in range(3):
            writer.write(b"message %d\n" % n)
            await asyncio.sleep(0.1)
        await asyncio.sleep(3600)

    sim.host("n1", sender)
    sim.host("n2", server)


class _Collect(asyncio.DatagramProtocol):
    def __init__(self, got: list[bytes]) -> None:
        self.got = got

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.got.append(data)


def _datagrams(sim: Simulation, got: list[bytes]) -> None:
    """n1 sends three datagrams to n2, 0.1 s apart; n2's protocol collects them."""

    async def server() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: _Collect(got), local_addr=("0.0.0.0", 7001))
        await asyncio.sleep(3600)

    async def sender() -> None:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("n2", 7001)
        )
        await asyncio.sleep(1.0)
        for n in range(3):
            transport.sendto(b"datagram %d" % n)
            await asyncio.sleep(0.1)

    sim.host("n1", sender)
    sim.host("n2", server)


@pytest.mark.parametrize(("after", "delivered"), [(True, 2), (False, 1)])
def test_a_crash_at_the_second_datagram_sent_delivers_it_only_when_after(
    after: bool, delivered: int
) -> None:
    got: list[bytes] = []
    sim = Simulation(seed=2)
    _datagrams(sim, got)
    sim.advance(0.5)
    assert sim.crash_at_operation("n1", "send", after=after, count=2)
    sim.advance(2.0)
    assert sim.disarm_operation("n1") and not sim.nodes.get("n1").up
    assert got == [b"datagram %d" % n for n in range(delivered)]
    sim.run(max_time=sim.loop.time())  # end it: nothing left pending


def test_a_crash_just_after_a_stream_send_drops_it_with_the_connection() -> None:
    # The network's crash model: a crashed node's connections reset, and
    # what they still had queued is dropped, the send just made included.
    got: list[bytes] = []
    sim = Simulation(seed=2)
    _messenger(sim, got)
    sim.advance(0.5)
    assert sim.crash_at_operation("n1", "send", after=True, count=2)
    sim.advance(2.0)
    assert sim.disarm_operation("n1") and got == [b"message 0\n"]
    sim.run(max_time=sim.loop.time())  # end it: nothing left pending


def test_a_crash_before_a_connect_sends_no_syn() -> None:
    got: list[bytes] = []
    sim = Simulation(seed=3)
    _messenger(sim, got)
    sim.advance(0.5)
    assert sim.crash_at_operation("n1", "connect", after=False)
    sim.advance(2.0)
    assert sim.disarm_operation("n1") and not sim.nodes.get("n1").up
    assert got == [] and sim.nodes.get("n2").up  # no connection, so nothing to receive
    sim.run(max_time=sim.loop.time())  # end it: nothing left pending


@pytest.mark.parametrize(("after", "delivered"), [(False, 1), (True, 2)])
def test_a_crash_at_a_receive_hands_the_data_over_only_when_after(
    after: bool, delivered: int
) -> None:
    got: list[bytes] = []
    sim = Simulation(seed=3)
    _datagrams(sim, got)
    sim.advance(0.5)
    assert sim.crash_at_operation("n2", "receive", after=after, count=2)
    sim.advance(2.0)
    assert sim.disarm_operation("n2") and not sim.nodes.get("n2").up
    assert got == [b"datagram %d" % n for n in range(delivered)]
    sim.run(max_time=sim.loop.time())


def test_a_client_crashed_at_an_operation_has_no_result_and_fails_nothing() -> None:
    async def client() -> str:
        await asyncio.sleep(0.5)
        try:
            await fs.write_file("/x", b"data", durable=True)
        except OSError:
            raise RuntimeError("a dead client's error must not fail the run") from None
        return "first incarnation"

    sim = Simulation(seed=4)
    sim.client("c", client)
    sim.at(0.1, lambda: sim.crash_at_operation("c", "write", after=False))
    sim.at(1.0, lambda: sim.disarm_operation("c") and sim.restart("c"))
    result = sim.run(max_time=10.0)
    assert result.values == {"c": "first incarnation"}  # from its second incarnation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda sim: sim.crash_at_operation("n1", "read"),
         "Simulation.crash_at_operation(operation=...) must be one of fsync, write, rename, "
         "send, receive, connect, got 'read'"),
        (lambda sim: sim.crash_at_operation("n1", "fsync", count=0),
         "Simulation.crash_at_operation(count=...) must be an int in [1, 1e9], got 0"),
        (lambda sim: sim.crash_at_operation("n1", "fsync", after="yes"),
         "Simulation.crash_at_operation.after must be a bool"),
    ],
)  # fmt: skip
def test_a_bad_operation_crash_is_a_one_line_usage_error(call: Any, message: str) -> None:
    async def idle() -> None:
        await asyncio.sleep(10)

    sim = Simulation(seed=0)
    sim.host("n1", idle)
    sim.advance(0.1)
    with pytest.raises(UsageError) as info:
        call(sim)
    sim.run(max_time=sim.loop.time())
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_the_nemesis_arms_operation_crashes_and_they_fire() -> None:
    def world(sim: Simulation) -> None:
        async def host() -> None:
            async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                with contextlib.suppress(OSError):
                    while line := await reader.readline():
                        writer.write(line)

            await asyncio.start_server(echo, "0.0.0.0", 5000)
            me = seedbed.current_node()
            while True:  # every operation kind, over and over
                await fs.write_file("/tmp", b"x" * 100, durable=True)
                await fs.rename("/tmp", "/data")
                for other in ("h1", "h2", "h3"):
                    if other != me:
                        with contextlib.suppress(OSError, TimeoutError):
                            reader, writer = await asyncio.open_connection(other, 5000)
                            writer.write(b"ping\n")
                            await asyncio.wait_for(reader.readline(), 0.5)
                            writer.close()
                await asyncio.sleep(0.01)

        for name in ("h1", "h2", "h3"):
            sim.host(name, host)

    profile = FaultProfile(operation_crash_per_second=2.0, max_down=1, fault_duration_mean=0.5)
    scenario = Scenario("ops", world, faults=profile, duration=20.0)
    result = scenario.run(seed=1)
    counts = result.faults["operation_crash"]
    assert counts["injected"] >= 10 and counts["effective"] >= counts["injected"] // 2, counts
    assert scenario.run(seed=1).trace_hash == result.trace_hash
