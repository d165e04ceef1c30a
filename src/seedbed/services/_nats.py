"""`Nats(...)`: a NATS core broker as a node main, for unmodified `nats-py` clients.

Needs nothing beyond the standard library: the broker (`_nats_broker`) is
seedbed's own. Each start of the node is a fresh broker with no
subscriptions (core NATS keeps nothing on disk).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from seedbed._core.identity import current_node
from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import UsageError
from seedbed.services._nats_broker import MAX_PAYLOAD, READ_SIZE, Broker, Client

NodeMain = Callable[[], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class NatsOptions:
    """What `Nats(...)` was given (see `Nats`)."""

    port: int = 4222
    latency_min: float = 0.0
    latency_max: float = 0.001

    def __post_init__(self) -> None:
        port = self.port
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise UsageError(f"Nats(port=...) takes a port number 1-65535, got {port!r}")
        for name in ("latency_min", "latency_max"):
            value = getattr(self, name)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0:
                raise UsageError(f"Nats({name}=...) takes seconds >= 0, got {value!r}")
        if self.latency_min > self.latency_max:
            raise UsageError(
                f"Nats(latency_min={self.latency_min!r}) is above latency_max={self.latency_max!r}"
            )


def Nats(  # named as the service it stands in for, like a class
    *, port: int = 4222, latency_min: float = 0.0, latency_max: float = 0.001
) -> NodeMain:
    """A node main that serves NATS core on `port` of the simulated network.

    `sim.host("nats", Nats())`: clients on other nodes connect with an
    unmodified `nats-py` client to `nats://nats:4222`. Subjects with `*` and
    `>` wildcards, queue groups (each message to one member, chosen by the
    seed), request/reply (with the "no responders" status), headers.
    At-most-once, as core NATS: a crash loses subscriptions and messages in
    flight. Each read from a connection waits a service time drawn between
    `latency_min` and `latency_max`; with buggify on, a subscriber may be
    cut off as a slow consumer. No JetStream, no clustering, no TLS or auth.
    """
    options = NatsOptions(port=port, latency_min=latency_min, latency_max=latency_max)
    main: NodeMain = functools.partial(serve, options)
    return main


async def serve(options: NatsOptions) -> None:
    node = current_node()
    loop = asyncio.get_running_loop()
    if node is None or type(loop) is not SeedbedLoop:
        raise UsageError(
            "seedbed.services.Nats(...) is a node main: give it to a Simulation, "
            'sim.host("nats", Nats()), rather than running it outside a simulated node'
        )
    label = f"nats {node}"
    broker = Broker(loop.entropy.stream(f"services {label}"), label)
    info = {
        "server_id": f"seedbed-{node}", "server_name": node, "version": "2.10.0", "proto": 1,
        "go": "seedbed", "host": node, "port": options.port, "headers": True,
        "max_payload": MAX_PAYLOAD,
    }  # fmt: skip
    greeting = b"INFO %s\r\n" % json.dumps(info).encode()
    handler = functools.partial(_handle, options, broker, greeting)
    server = await asyncio.start_server(handler, port=options.port)
    await server.serve_forever()


async def _handle(
    options: NatsOptions,
    broker: Broker,
    greeting: bytes,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    client = Client(broker, writer)
    broker.clients.append(client)
    writer.write(greeting)
    try:
        while not writer.is_closing():
            data = await reader.read(READ_SIZE)
            if not data:
                break
            await _service_time(options, broker)
            client.feed(data)
    except (ConnectionError, OSError):
        pass  # reset by the peer or the network: the client is gone
    finally:
        client.close()


async def _service_time(options: NatsOptions, broker: Broker) -> None:
    low, high = options.latency_min, options.latency_max
    delay = low if low == high else broker.stream.uniform(low, high, f"{broker.label}: latency")
    if delay > 0:
        await asyncio.sleep(delay)
