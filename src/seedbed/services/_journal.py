"""The journal: which keys each command changed, sealed into records, and when each is durable.

Every command (a MULTI/EXEC or a script included) is one record, numbered
in the order commands ran. A record holds the new state of every key the
command changed (`_aof.record`), so replaying the file rebuilds the keys
whatever the command was: an `SPOP`'s random choice, a script, a relative
`EXPIRE` (written as an absolute time, as Redis writes it).

A reply is sent only once the record it depends on (the one sealed for its
command, or the one being built when a message was published) is durable as
`appendfsync` promises: with "always", once the file has been fsynced past
that record, so no client ever sees a write that a crash can take back
(nor a read of one: a read's record is empty, but it comes after the
write's). With "everysec" and "no", at once, as Redis replies before its
fsync.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any

Encode = Callable[[list[tuple[int, bytes]]], bytes]


class Journal:
    """The keys changed since the last record; the records' bytes and their durability."""

    def __init__(self, *, wait_for_sync: bool) -> None:
        self.running: Any = None  # the session whose command is running, if any
        self.pending = 1  # the number of the record being built
        self.loading = False  # replaying the file: its changes are not written again
        self.buffer = bytearray()  # sealed records not yet handed to the writer
        self.data_ready = asyncio.Event()
        self.encode: Encode | None = None  # set once the server exists
        self.followers: list[Callable[[bytes], None]] = []  # replicas: each record's bytes
        self._persist = False  # an append-only file takes the records (`open`)
        self._wait = wait_for_sync
        self._touched: dict[tuple[int, bytes], None] = {}  # insertion-ordered
        self.sealed_end = 0  # the file offset just past every sealed record
        self.synced_end = 0
        self.synced = 0  # every record up to this number is durable
        self._unsynced: collections.deque[tuple[int, int]] = collections.deque()
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    def open(self, end: int) -> None:
        """Hand records to the append-only file from now on, after its first `end`
        bytes (what was loaded: durable, since loading fsyncs what it keeps)."""
        self._persist = True
        self.sealed_end = self.synced_end = end
        self._touched.clear()  # what loading changed is already in the file

    def touch(self, db: int, key: bytes) -> None:
        """A command changed `key` of database `db`."""
        if not self.loading:
            self._touched[(db, key)] = None

    def seal(self) -> None:
        """End the record being built: encode its keys, hand the bytes to the file's
        writer and to every replica."""
        record = self.pending
        self.pending += 1
        if self._touched and self.encode is not None and (self._persist or self.followers):
            keys = list(self._touched)
            self._touched.clear()
            data = self.encode(keys)
            if self._persist:
                self.buffer += data
                self.sealed_end += len(data)
                self.data_ready.set()
            for follower in list(self.followers):
                follower(data)
        self._touched.clear()
        if self.sealed_end <= self.synced_end:
            self._advance(record)
        else:
            self._unsynced.append((record, self.sealed_end))

    def take(self) -> bytes:
        """The sealed bytes not yet written, for the writer."""
        data = bytes(self.buffer)
        self.buffer.clear()
        self.data_ready.clear()
        return data

    def synced_to(self, end: int) -> None:
        """The file is durable up to offset `end`."""
        self.synced_end = max(self.synced_end, end)
        record = self.synced
        while self._unsynced and self._unsynced[0][1] <= self.synced_end:
            record = self._unsynced.popleft()[0]
        if not self._unsynced:
            record = self.pending - 1
        self._advance(record)

    def durable(self, record: int) -> bool:
        """True when a reply that depends on `record` may be sent."""
        return not self._wait or not self._persist or record <= self.synced

    async def until_durable(self, record: int) -> None:
        """Wait until `durable(record)`."""
        if self.durable(record):
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((record, future))
        await future

    def _advance(self, record: int) -> None:
        self.synced = max(self.synced, record)
        if not self._waiters:
            return
        ready = [f for r, f in self._waiters if r <= self.synced]
        self._waiters = [(r, f) for r, f in self._waiters if r > self.synced]
        for future in ready:
            if not future.done():
                future.set_result(None)
