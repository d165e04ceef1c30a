"""Asynchronous replication: a replica follows a primary's records; REPLICAOF fails over.

A replica (`Redis(replicaof="redis-1")`) connects to its primary and sends
`SYNC`. The primary answers with one record that makes the replica's
keyspace its own (FLUSHALL, then every key), then streams every record it
seals (the same bytes its append-only file gets), without waiting for
the replica: a write is acknowledged to its client before any replica has
it, as in Redis. The replica applies each record atomically through a link
session (which may write; clients of a replica may not: `READONLY`), into
its own keyspace, its own append-only file and its own replicas. When the
link breaks (a crash, a partition's reset) the replica keeps serving what it
has, stale, and reconnects every second with a full resync. With buggify
on, a replica may fall behind (wait half a second before applying what
arrived), so reads from it are stale for longer.

`REPLICAOF NO ONE` (or `SLAVEOF NO ONE`) sent to a replica promotes it: it
stops following and accepts writes, with whatever it had received, so the
writes its old primary acknowledged but had not yet streamed are lost, as
in a real Redis failover. `REPLICAOF host port` makes a node follow
another (a full resync replaces its keys). `ROLE` says which it is.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from fakeredis._helpers import SimpleError, SimpleString

from seedbed.faults import buggify
from seedbed.services import _aof
from seedbed.services._journal import Journal
from seedbed.services._keyspace import SimServer
from seedbed.services._session import Session

RETRY = 1.0  # seconds between a replica's attempts to reach its primary, as Redis's cron
LAG = 0.5  # seconds a buggified replica waits before applying what arrived
READ_SIZE = 64 * 1024
log = logging.getLogger("seedbed.services")


class Replication:
    """This node's role: a primary (`primary is None`) or a replica of `primary`."""

    def __init__(self, server: SimServer, journal: Journal, *, persisted: bool, label: str) -> None:
        self.server = server
        self.journal = journal
        self.persisted = persisted
        self.label = label
        self.primary: tuple[str, int] | None = None
        self.replicated = False  # once a replica or followed: refuse what cannot replicate
        self.connected = False
        self._task: asyncio.Task[None] | None = None
        self._reader = _aof.Reader(Session(server, journal, persisted=persisted, link=True))

    def follow(self, host: str, port: int) -> None:
        """Replicate `host:port` from now on (a full resync first)."""
        self.stop_following()
        self.primary, self.replicated = (host, port), True
        self._task = asyncio.get_running_loop().create_task(self._follow(host, port))

    def stop_following(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self._task, self.primary, self.connected = None, None, False

    def command(self, session: Session, name: bytes, args: list[bytes]) -> Any:
        """Answer SYNC, REPLICAOF/SLAVEOF and ROLE (the reply, or None for none)."""
        if name == b"sync":
            return self._serve_replica(session)
        if name == b"role":
            if self.primary is None:
                return [b"master", 0, []]
            state = b"connected" if self.connected else b"connect"
            return [b"slave", self.primary[0].encode(), self.primary[1], state, -1]
        if len(args) != 2:
            return SimpleError(f"ERR wrong number of arguments for '{name.decode()}' command")
        if args[0].lower() == b"no" and args[1].lower() == b"one":
            self.stop_following()
            return SimpleString(b"OK")
        try:
            port = int(args[1])
        except ValueError:
            return SimpleError("ERR value is not an integer or out of range")
        self.follow(args[0].decode(), port)
        return SimpleString(b"OK")

    def _serve_replica(self, session: Session) -> None:
        """This connection is a replica's link from now on: a snapshot, then every record."""
        self.replicated = True
        session.send_raw(_aof.snapshot(self.server, self._reader))
        followers = self.journal.followers
        followers.append(session.send_raw)
        session.on_close.append(lambda: followers.remove(session.send_raw))

    async def _follow(self, host: str, port: int) -> None:
        link = Session(self.server, self.journal, persisted=self.persisted, link=True)
        try:
            while True:
                await self._sync_once(link, host, port)
                self.connected = False
                await asyncio.sleep(RETRY)
        finally:
            link.close()

    async def _sync_once(self, link: Session, host: str, port: int) -> None:
        writer = None
        try:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(_aof.command(b"SYNC"))
            buffer = b""
            while data := await reader.read(READ_SIZE):
                buffer += data
                if buffer.startswith(b"-"):  # an error, not a record: not our stand-in?
                    log.error("%s: %s:%d refused SYNC: %r", self.label, host, port, buffer)
                    return
                payloads, end = _aof.frames(buffer)
                buffer = buffer[end:]
                if payloads and buggify(f"{self.label}: the replica falls behind"):
                    await asyncio.sleep(LAG)  # a slow replica: its reads stay stale longer
                for payload in payloads:
                    link.apply(payload)
                    self.connected = True
        except (ConnectionError, OSError, TimeoutError):
            pass  # the primary is down or cut off: keep serving what we have, retry
        finally:
            if writer is not None:
                writer.close()
