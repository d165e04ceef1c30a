"""One-way messages between replicas over asyncio streams, and a replica's inbox.

Raft needs no request/response pairing: every message carries the sender and
its term, and a reply is just another message. Each replica keeps one
outgoing connection per peer (`PeerLink`), reconnecting after a failure and
dropping what it could not send: Raft tolerates lost messages and resends
from its own state at the next heartbeat.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
from typing import Any

from examples.kvstore import frames
from seedbed import buggify

log = logging.getLogger("kvstore.transport")

MAX_QUEUED = 256  # per peer: beyond this the oldest messages are dropped
CONNECT_TIMEOUT = 1.0


class Mailbox:
    """A FIFO of items with an awaitable `get` for one consumer and a non-blocking `drain`.

    The consumer waits on a bare future that `put` resolves: the one wakeup an
    `asyncio.Event` gave, without the event's coroutine, waiter list and loop
    lookup per wait (a replica's inbox and each peer's outbox wait once per
    message; issue 30).
    """

    def __init__(self, limit: int | None = None) -> None:
        self._items: collections.deque[Any] = collections.deque(maxlen=limit)
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Any:
        items = self._items
        while not items:
            if self._waiter is not None:
                raise RuntimeError("a Mailbox has one consumer: get() is already waiting")
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return items.popleft()

    def drain(self) -> list[Any]:
        """Everything queued right now, in order."""
        items = list(self._items)
        self._items.clear()
        return items


class PeerLink:
    """The outgoing connection to one peer, with its queue of messages."""

    def __init__(self, name: str, address: tuple[str, int]) -> None:
        self.name = name
        self.address = address
        self.outbox = Mailbox(MAX_QUEUED)
        self._writer: asyncio.StreamWriter | None = None

    def send(self, message: frames.Message) -> None:
        self.outbox.put(message)

    async def run(self) -> None:
        """Send queued messages forever, reconnecting as needed."""
        while True:
            message = await self.outbox.get()
            try:
                writer = await self._connect()
                if buggify("kvstore: a delayed message to a peer"):
                    await asyncio.sleep(random.uniform(0.005, 0.2))
                writer.write(frames.encode(message))
                await writer.drain()
            except (TimeoutError, OSError) as exc:
                log.debug("to %s: %s; message dropped", self.name, exc)
                self._close()
                await asyncio.sleep(random.uniform(0.05, 0.15))

    async def _connect(self) -> asyncio.StreamWriter:
        if self._writer is None or self._writer.is_closing():
            host, port = self.address
            connecting = asyncio.open_connection(host, port)
            reader, self._writer = await asyncio.wait_for(connecting, CONNECT_TIMEOUT)
            asyncio.get_running_loop().create_task(_discard(reader))
        assert self._writer is not None
        return self._writer

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


async def _discard(reader: asyncio.StreamReader) -> None:
    """Read (and ignore) the peer's side, so its FIN or RST is noticed."""
    try:
        while await reader.read(4096):
            pass
    except OSError:
        pass


def parse_peers(text: str) -> dict[str, tuple[str, int]]:
    """`n1=127.0.0.1:7001,n2=...` -> {"n1": ("127.0.0.1", 7001), ...}, in the order given."""
    peers: dict[str, tuple[str, int]] = {}
    for item in text.split(","):
        name, sep, address = item.strip().partition("=")
        host, colon, port = address.rpartition(":")
        if not sep or not colon or not name or not host or not port.isdigit():
            raise ValueError(f"bad peer {item!r}: expected NAME=HOST:PORT")
        if name in peers:
            raise ValueError(f"peer {name!r} appears twice")
        peers[name] = (host, int(port))
    return peers
