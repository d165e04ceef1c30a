"""A small failing world for `seedbed view`'s tests: a client talks to a server over a
stream and datagrams through a partition, a clog and a server crash, then an
assertion fails. Node names and messages can carry hostile strings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from seedbed import NetworkConfig, Simulation, always
from seedbed.check import Recorder

HOSTILE = '</script><!--"><img src=x onerror="window.__pwned=1">\u202eevil javascript:alert(1)'


class _Echo(asyncio.DatagramProtocol):
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.transport.sendto(data, addr)


def world(
    seed: int,
    trace: str | Path | None,
    *,
    server: str = "srv",
    message: str = "ok",
    rounds: int = 20,
    replay: str | Path | None = None,
) -> tuple[str, Any]:
    """Run the world: its trace hash and its failure (an assertion naming `message`)."""
    # Exact timers: its faults strike at whole milliseconds, and on the default
    # 1 ms tick its rounds begin there too, so no message is ever in flight
    # when the link closes (swarm's fault times are drawn, not round numbers).
    # No stall episodes either: only the faults it plans slow a request.
    quiet = NetworkConfig(stall_per_second=0.0)
    sim = Simulation(seed=seed, trace=trace, replay=replay, clock_resolution=0, network=quiet)
    recorder = Recorder()

    async def serve() -> None:
        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                writer.write(line)
                await writer.drain()
            writer.close()

        await asyncio.start_server(echo, server, 7000)
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(_Echo, local_addr=(server, 7001))
        await asyncio.Event().wait()

    async def talk() -> None:
        loop = asyncio.get_running_loop()
        udp, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=(server, 7001)
        )
        for round_ in range(rounds):
            try:
                udp.sendto(f"ping {round_} {message}".encode())
                with recorder.operation("cli", "echo", round_) as op:
                    connecting = asyncio.open_connection(server, 7000)
                    reader, writer = await asyncio.wait_for(connecting, 0.03)
                    writer.write(f"hello {round_} {message}\n".encode())
                    got = await asyncio.wait_for(reader.readline(), 0.03)
                    writer.close()
                    op.ok(got.decode())
            except (TimeoutError, OSError):
                pass
            await asyncio.sleep(0.02)
        always(False, f"the final check: {message}")

    sim.host(server, serve)
    sim.client("cli", talk)
    sim.at(0.12, lambda: sim.partition("cli", server))
    sim.at(0.2, sim.heal)
    sim.at(0.27, lambda: sim.hold("cli", server))
    sim.at(0.33, sim.heal)
    sim.at(0.4, lambda: sim.crash(server))
    sim.at(0.45, lambda: sim.restart(server))
    try:
        sim.run(max_time=30)
    except Exception as exc:  # the assertion, as a run reports it
        return sim.loop.trace.hash, exc
    return sim.loop.trace.hash, None


def history_world(seed: int, trace: str | Path | None) -> tuple[str, Any]:
    """Two clients whose histories both fail their checks, in one run: a stale read
    (not linearizable) and a read that misses a committed append (G-single-realtime).

    Two recorders with the same process names, so the viewer must tell their
    operations apart; a few good operations around the bad ones, so it must
    blame only the ones the checkers name. Returns the trace hash and the failure.
    """
    from seedbed import check

    sim = Simulation(seed=seed, trace=trace)
    single, txns = Recorder(), Recorder()
    register = {"x": 0}

    async def writer() -> None:
        for value in (1, 2):
            with single.operation("p1", "write", value) as op:
                await asyncio.sleep(0.01)
                register["x"] = value
                op.ok(value)
        with txns.operation("p1", "txn", [("append", "k", 1)]) as op:
            await asyncio.sleep(0.01)
            op.ok([("append", "k", 1)])

    async def reader() -> None:
        await asyncio.sleep(0.1)  # after every write and the append returned
        with single.operation("p2", "read") as op:
            await asyncio.sleep(0.01)
            op.ok(1)  # stale: 2 was written before this read began
        with txns.operation("p2", "txn", [("r", "k", None)]) as op:
            await asyncio.sleep(0.01)
            op.ok([("r", "k", [])])  # misses the append that committed before it began

    async def checker() -> None:
        await asyncio.sleep(1.0)
        verdict = check.linearizable(single.history, check.register(0))
        always(bool(verdict), f"the register is linearizable: {verdict.explain()[:200]}")

    async def txn_checker() -> None:
        await asyncio.sleep(0.9)
        verdict = check.check_transactions(txns.history)
        assert not verdict  # noted for the viewer; the register's check fails the run

    sim.client("w", writer)
    sim.client("r", reader)
    sim.client("check", txn_checker)
    sim.client("check2", checker)
    try:
        sim.run(max_time=5)
    except Exception as exc:  # the register's check, as a run reports it
        return sim.loop.trace.hash, exc
    return sim.loop.trace.hash, None
