"""One client connection of the Redis stand-in: bytes in, commands run, replies out.

Two tasks per connection, as Redis's event loop reads and writes a client
independently: the reader feeds what arrives to the connection's `Session`
(fakeredis parses and runs the commands), after a drawn service time; the
sender writes the replies in order, each once the journal says the writes
it depends on are as durable as `appendfsync` promises. A blocked command
(BLPOP) or a message for a subscriber is answered later, by the sender,
whenever the session queues it.

Fault model: the connection is a simulated TCP stream, so the world's
partitions, latency and crashes reach it; a crash of the Redis node resets
it. `buggify` may disconnect a subscriber instead of delivering a message
to it, as Redis does to a subscriber that passes its
`client-output-buffer-limit pubsub` (the message is lost, the client sees
the connection close); and may make a command slow (a fork for a rewrite,
a large key freed).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from fakeredis._helpers import SimpleError

from seedbed._core.entropy import Stream
from seedbed.faults import buggify
from seedbed.services._journal import Journal
from seedbed.services._keyspace import SimServer
from seedbed.services._options import RedisOptions
from seedbed.services._replication import Replication
from seedbed.services._resp import encode
from seedbed.services._session import Session

READ_SIZE = 64 * 1024
SLOW_COMMAND = 0.1  # seconds: how long a buggified slow command stalls its connection


@dataclass
class Service:
    """What every connection of one incarnation of the stand-in shares."""

    options: RedisOptions
    server: SimServer
    journal: Journal
    replication: Replication
    stream: Stream  # the node's "services redis" entropy stream
    label: str  # "redis node-name", in every draw's reason
    writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def service_time(self) -> None:
        """Wait the drawn time a command takes before it runs (none if min == max == 0)."""
        low, high = self.options.latency_min, self.options.latency_max
        delay = low if low == high else self.stream.uniform(low, high, f"{self.label}: latency")
        if buggify(f"{self.label}: a slow command"):
            delay += SLOW_COMMAND
        if delay > 0:
            await asyncio.sleep(delay)


async def handle(
    service: Service, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve one client until it disconnects (or the connection is reset)."""
    session = Session(
        service.server, service.journal, persisted=service.options.appendonly,
        role=service.replication,
    )  # fmt: skip
    service.writers.append(writer)
    sender = asyncio.create_task(_send(service, session, writer))
    try:
        await _receive(service, session, reader)
        if session.closing:  # a protocol error: the sender writes it, then hangs up
            await sender
    except (ConnectionError, OSError):
        pass  # reset by the peer or the network: the client is gone, as for Redis
    finally:
        service.writers.remove(writer)
        session.close()
        sender.cancel()
        writer.close()


async def _receive(service: Service, session: Session, reader: asyncio.StreamReader) -> None:
    while not session.closing:
        data = await reader.read(READ_SIZE)
        if not data:
            return
        await service.service_time()
        try:
            session.sendall(data)
        except SimpleError as exc:  # not RESP: Redis answers with the error and hangs up
            session.protocol_error(exc)
            return


async def _send(service: Service, session: Session, writer: asyncio.StreamWriter) -> None:
    journal = service.journal
    while True:
        await session.wake.wait()
        session.wake.clear()
        out: list[bytes] = []
        while session.replies:
            reply = session.replies[0]
            if not journal.durable(reply.record):
                _write(writer, out)
                await journal.until_durable(reply.record)
            session.replies.popleft()
            if reply.push and buggify(f"{service.label}: a subscriber passes its output limit"):
                session.closing = True  # Redis closes it; what was queued is lost
                writer.close()
                return
            out.append(encode(reply.value, reply.protocol, push=reply.push))
        _write(writer, out)
        if session.closing:
            writer.close()
            return
        await writer.drain()


def _write(writer: asyncio.StreamWriter, out: list[bytes]) -> None:
    if out and not writer.is_closing():
        writer.write(b"".join(out))
        out.clear()
