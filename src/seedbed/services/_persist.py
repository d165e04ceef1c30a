"""The append-only file on the node's simulated disk: loaded at start, appended, fsynced.

Fault model: the file lives on the node's disk through the plain Python file
API, so every disk fault of the world applies (unsynced writes torn at a
crash, EIO, failed fsyncs, latency). What a crash keeps is what was
fsynced, and when that happens is `appendfsync`'s promise:

- "always": the writer fsyncs each batch of records before their replies
  go out (`Journal` holds them), so an acknowledged write is on disk;
- "everysec": records are written at once and fsynced once a second, as
  Redis's background fsync does, so a crash can lose about a second of
  acknowledged writes;
- "no": Redis never fsyncs; the kernel writes dirty pages back on its own,
  modelled as an fsync every `KERNEL_WRITEBACK` seconds, so a crash can
  lose that much.

Loading keeps the whole, checksummed records at the start of the file and
cuts the rest (Redis's `aof-load-truncated yes`), fsyncing the cut so that
new records never follow garbage. An error writing or fsyncing the file is
fatal (`AofFailure`): the stand-in stops serving, as Redis exits when it
cannot persist under "always". (Under "everysec" real Redis instead refuses
writes until an fsync succeeds; the stand-in does not model that.)
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from seedbed.services import _aof
from seedbed.services._journal import Journal
from seedbed.services._keyspace import SimServer
from seedbed.services._options import RedisOptions
from seedbed.services._session import Session

EVERYSEC = 1.0  # Redis's background fsync period under "everysec"
KERNEL_WRITEBACK = 30.0  # Linux's dirty_expire_centisecs: how old dirty pages get


class AofFailure(Exception):
    """The append-only file could not be written or fsynced: the stand-in stops."""


class AppendOnlyFile:
    """The file, its loading, and the tasks that write and fsync it."""

    def __init__(self, options: RedisOptions, journal: Journal) -> None:
        self.options = options
        self.journal = journal
        self.path = options.path
        self._file: Any = None
        self._written = 0  # bytes written to the file (synced or not)

    def load(self, server: SimServer) -> int:
        """Replay the file's whole records into `server`; cut what follows them.
        Returns how many records were loaded."""
        try:
            payloads, end = self._read_whole_records()
        except OSError as exc:
            raise AofFailure(f"loading the append-only file {self.path}: {exc}") from exc
        loader = Session(server, self.journal, persisted=True, link=True)
        self.journal.loading = True
        try:
            for payload in payloads:
                loader.apply(payload)
        finally:
            self.journal.loading = False
            loader.close()
        self.journal.open(end)
        self._written = end
        try:
            self._file = open(self.path, "ab")  # noqa: SIM115 - open for the process's life
        except OSError as exc:
            raise AofFailure(f"opening the append-only file {self.path}: {exc}") from exc
        return len(payloads)

    def _read_whole_records(self) -> tuple[list[bytes], int]:
        os.makedirs(self.options.dir, exist_ok=True)
        data = b""
        if os.path.exists(self.path):
            with open(self.path, "rb") as file:
                data = file.read()
        payloads, end = _aof.frames(data)
        if end < len(data) or not data:
            with open(self.path, "ab") as file:  # created if missing, its name fsynced with it
                file.truncate(end)
                file.flush()
                os.fsync(file.fileno())
        return payloads, end

    async def write_forever(self) -> None:
        """Write sealed records as they come; under "always", fsync each batch."""
        journal, always = self.journal, self.options.appendfsync == "always"
        while True:
            await journal.data_ready.wait()
            data = journal.take()
            try:
                self._file.write(data)
                self._file.flush()  # into the OS (the node's page cache): survives a stop
            except OSError as exc:
                raise AofFailure(f"writing the append-only file {self.path}: {exc}") from exc
            self._written += len(data)
            if always:
                self._fsync()

    async def sync_forever(self) -> None:
        """Under "everysec" and "no", fsync what was written, periodically."""
        period = EVERYSEC if self.options.appendfsync == "everysec" else KERNEL_WRITEBACK
        while True:
            await asyncio.sleep(period)
            if self._written > self.journal.synced_end:
                self._fsync()

    def _fsync(self) -> None:
        end = self._written
        try:
            os.fsync(self._file.fileno())
        except OSError as exc:
            raise AofFailure(f"fsyncing the append-only file {self.path}: {exc}") from exc
        self.journal.synced_to(end)

    async def run(self) -> None:
        """The writer and, unless "always", the periodic fsync; returns only by raising."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self.write_forever())
            if self.options.appendfsync != "always":
                group.create_task(self.sync_forever())
