"""A small failing world for `seedbed view`'s tests: a client talks to a server over a
stream and datagrams through a partition, a clog and a server crash, then an
assertion fails. Node names and messages can carry hostile strings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from seedbed import Simulation, always
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
    sim = Simulation(seed=seed, trace=trace, replay=replay, clock_resolution=0)
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
