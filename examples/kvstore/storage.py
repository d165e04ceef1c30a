"""A replica's durable state: vote, log and snapshot, in three files under one directory.

Fault model (what this module survives): a crash at any instant, losing
whatever was not fsynced and tearing the last unsynced write; a record
damaged on the disk or on its way back from it (checksums catch it; a read
is retried, since a flipped bit on the way back is transient); a failed
write or fsync, which raises `OSError` to the caller: the replica then
restarts from the disk, and `load` writes everything it read to new files
and fsyncs them before use, because after a failed fsync reads may show
data the disk never made durable (PostgreSQL's "fsyncgate").

- `meta`: `{term, vote}`, replaced atomically (write a temporary file, fsync,
  rename, fsync the directory) before any vote or term is acted on; after
  damage, also what the replica must not forget in a later crash (`damaged`,
  `vote_floor`, `bound`: see `Recovered`).
- `log`: entries `{index, term, cmd}` as back-to-back frames, fsynced before
  any acknowledgement; a conflicting suffix is cut by truncation. Records
  after a damaged one are salvaged (see `Storage._salvage`).
- `snapshot`: `{index, term, state}` replaced atomically; the log is then
  rewritten without the entries the snapshot covers (bounded log), and
  without those after it when they conflict (an installed snapshot ending
  inside a stale tail). A crash between the two leaves the old log beside the
  new snapshot; recovery drops it if its entry at the snapshot's index is of
  another term.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import posixpath
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from examples.kvstore import bugs, frames
from seedbed import buggify, fs, reachable

log = logging.getLogger("kvstore.storage")

Entry = dict[str, Any]
# A damaged read is read again: the disk's bit flips on the way back are
# transient (a read of unchanged bytes comes back differently), damage at
# rest is not. Bytes are taken as damaged at rest once the same damaged image
# was read SAME_READS times; after MAX_READS reads, the longest valid prefix
# any read showed (a checksum cannot be faked by a flip) is all that is known.
SAME_READS = 3
MAX_READS = 32
SHORT_READS = 8  # reads of a file returning less than its size, before giving up (EIO)


@dataclass
class Recovered:
    """What the disk kept: the state a restarted replica resumes from."""

    term: int = 0
    vote: str | None = None
    snapshot: dict[str, Any] | None = None
    entries: list[Entry] = field(default_factory=list)
    damaged: bool = False  # meta or snapshot lost: what it acknowledged is unknown
    vote_floor: int = 0  # a repaired replica votes only in terms above this
    # (term, index) of the last entry the log held when records in the middle
    # were lost: the replica votes only for logs at least this complete.
    bound: tuple[int, int] = (0, 0)
    # The intact records found after the lost ones (kept in `meta` while the
    # bound stands): where a peer's log matches one of them, that peer's
    # entries before it are the lost ones (Raft's log matching), so the hole
    # can be refilled without a leader (see `raft.Replica._on_refill_reply`).
    salvaged: list[Entry] = field(default_factory=list)


class Storage:
    """The three files of one replica; every method returns once its data is durable."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._ends: list[int] = []  # byte offset where each log entry ends
        self._first = 1  # index of the first entry in the log file
        self._file: fs.File | None = None

    def _path(self, name: str) -> str:
        return f"{self.directory}/{name}"

    def span(self) -> tuple[int, int]:
        """(first, last): the indexes the log file holds, by this object's own account
        (last = first - 1 when it holds none). `truncate_from` and `append` find their
        byte offsets from it, so a replica's oracle compares it with the replica's log:
        an account one entry off cuts the wrong bytes at the next truncation, unseen
        until a restart reads them back."""
        return self._first, self._first + len(self._ends) - 1

    async def load(self) -> Recovered:
        """Read everything back after a (re)start, repairing what can be repaired."""
        await self._make_directory()
        recovered = Recovered()
        meta = await self._read_single("meta", recovered)
        if meta is not None:
            _resume_meta(recovered, meta)
        recovered.snapshot = await self._read_single("snapshot", recovered)
        base = recovered.snapshot["index"] if recovered.snapshot else 0
        data, records, end, torn_only = await self._read_log()
        if recovered.snapshot is not None and not _continues(records, recovered.snapshot):
            # A crash between installing a leader's snapshot and rewriting the log
            # (`save_snapshot`) left the log of the history the snapshot replaced:
            # its entry at the snapshot's index is of another term, so none after
            # it is the snapshot's (Raft's log matching). Nothing in it is damage.
            reachable("kvstore: a log superseded by the snapshot was dropped at recovery")
            records, torn_only = [], True
        entries = _contiguous(records, base)
        if meta is None and not recovered.damaged and await fs.exists(self._path("log")):
            # A first start makes `meta` durable before it creates the log (below),
            # so a log without a meta file lost it: whatever term and vote it held
            # are unknown, as when the file is unreadable.
            log.warning("%s: meta lost beside a log; waiting to be repaired", self.directory)
            reachable("kvstore: the meta file was missing beside a log (recovers as damaged)")
            recovered.damaged = True
        last = entries[-1]["index"] if entries else base
        # Valid records after a gap in the indexes: no append or rewrite leaves
        # one, a misdirected write does (its frames landed on a record boundary
        # further up the file), so they are damage at rest, whatever follows.
        stray = [record for record in records if _is_entry(record) and record["index"] > last]
        if stray or not torn_only:
            self._salvage(recovered, data, end, len(entries), stray)
        self._first = entries[0]["index"] if entries else base + 1
        recovered.salvaged = [entry for entry in recovered.salvaged if entry["index"] > last]
        # Durable again (see the fault model above), and before the damaged records
        # are dropped below: a second crash must not forget the damage. A first
        # start's too, before its log exists: a log never rests without its meta.
        await self.save_meta(
            recovered.term,
            recovered.vote,
            damaged=recovered.damaged,
            vote_floor=recovered.vote_floor,
            bound=recovered.bound,
            salvaged=recovered.salvaged,
        )
        if recovered.snapshot is not None:
            await self._replace("snapshot", recovered.snapshot)
        await self._rewrite(entries)
        recovered.entries = entries
        return recovered

    async def _make_directory(self) -> None:
        """Create the directory if needed, durably: a name is durable only once its
        parent directory is fsynced, and a replica that forgets its whole directory
        forgets its vote and its log without knowing it."""
        missing = []
        path = self.directory
        while path not in ("", "/", ".") and not await fs.exists(path):
            missing.append(path)
            path = posixpath.dirname(path)
        await fs.mkdir(self.directory, exist_ok=True, parents=True)
        for created in reversed(missing):
            await fs.fsync_dir(posixpath.dirname(created) or ".")

    async def _read_single(self, name: str, recovered: Recovered) -> dict[str, Any] | None:
        """The one record of `meta` or `snapshot`; damaged only if damaged at rest."""
        if not await fs.exists(self._path(name)):
            return None
        data = await self._read_settled(lambda: fs.read_file(self._path(name)))
        records, _, _ = frames.decode_records(data)
        if len(records) == 1:
            return records[0]
        log.warning("%s: %s unreadable; waiting to be repaired by peers", self.directory, name)
        if name == "meta":
            reachable("kvstore: the meta file was unreadable (the replica recovers as damaged)")
        else:
            reachable("kvstore: the snapshot was unreadable (the replica recovers as damaged)")
        recovered.damaged = True
        return None

    def _salvage(
        self, recovered: Recovered, data: bytes, damage: int, intact: int, stray: list[Entry]
    ) -> None:
        """After damage inside the log, the records that survive beyond it (and
        `stray`, the valid ones after a gap in the indexes before it).

        If some do, the log's last entry is still known, and it bounds the
        replica's votes (Raft compares only last entries) until a leader
        refills the hole. If none do, the damage runs to the end of the file:
        what a torn unsynced append leaves (with per-sector tearing, garbage
        and zeroed sectors follow the first bad record), dropped as a torn
        tail, as etcd's write-ahead log does. An acknowledged tail damaged at
        rest would look the same: the store cannot tell them apart, and its
        oracles would report a write lost that way.
        """
        found = [*stray, *(r for r in frames.salvage_records(data, damage) if _is_entry(r))]
        if found:
            recovered.bound = max(recovered.bound, *((e["term"], e["index"]) for e in found))
            recovered.salvaged = _by_index([*recovered.salvaged, *found])
            reachable("kvstore: the records after a damaged one were salvaged")
            log.warning(
                "%s: log damaged after %d records; its last entry (term %d, index %d) survives",
                self.directory,
                intact,
                *recovered.bound,
            )
        else:
            log.info("%s: a torn tail after %d records dropped", self.directory, intact)

    async def _read_log(self) -> tuple[bytes, list[Entry], int, bool]:
        """The log as it rests on the disk (see `_read_settled`): (its bytes, their
        valid records, where those end, whether the rest is only a torn tail)."""
        if not await fs.exists(self._path("log")):
            return b"", [], 0, True
        data = await self._read_settled(lambda: self._read_whole("log"))
        return (data, *frames.decode_records(data))

    @staticmethod
    async def _read_settled(read: Callable[[], Awaitable[bytes]]) -> bytes:
        """A file as it rests on the disk (`read` reads it whole), telling transient
        damage from damage at rest.

        A read whose frames all check out is the file (a flipped bit cannot
        keep a checksum). A damaged read is read again: a bit flipped on the
        way back from the disk flips elsewhere next time, so damage at rest is
        the damaged image read SAME_READS times alike. Taking three reads
        that each came back with a flip for damage at rest once made a
        replica drop an acknowledged, committed entry as a torn tail.
        """
        seen: dict[bytes, int] = {}
        best, best_end = b"", -1
        for _ in range(MAX_READS):
            data = await read()
            end = frames.decode_records(data)[1]
            if end == len(data):
                return data
            seen[data] = seen.get(data, 0) + 1
            if seen[data] >= SAME_READS:
                reachable("kvstore: a file was read damaged alike, again and again (at rest)")
                return data
            if end > best_end:
                best, best_end = data, end
        return best

    async def _read_whole(self, name: str) -> bytes:
        """All of file `name`. A read that returns less than the file holds is read
        again: what it left out is still on the disk, and taking the short read for
        the log once rewrote the log without entries the replica had acknowledged."""
        path = self._path(name)
        async with await fs.open(path) as file:
            size = await file.size()
        for _ in range(SHORT_READS):
            data = await fs.read_file(path)
            if buggify("kvstore: a short read of the log"):
                data = data[: random.randrange(len(data) + 1)]
            if len(data) >= size:
                return data
        raise OSError(errno.EIO, f"{path}: {SHORT_READS} short reads in a row")

    async def save_meta(
        self,
        term: int,
        vote: str | None,
        *,
        damaged: bool = False,
        vote_floor: int = 0,
        bound: tuple[int, int] = (0, 0),
        salvaged: list[Entry] | None = None,
    ) -> None:
        """Make `{term, vote}` (and what the replica must remember of past damage:
        the records salvaged after a hole too, while its bound stands) durable
        before the replica acts on it."""
        record: dict[str, Any] = {"term": term, "vote": vote}
        if damaged or vote_floor or bound > (0, 0):
            record.update(damaged=damaged, vote_floor=vote_floor, bound=list(bound))
        if bound > (0, 0) and salvaged:
            record["salvaged"] = salvaged
        await self._replace("meta", record)

    async def save_snapshot(self, snapshot: dict[str, Any], entries: list[Entry]) -> None:
        """Make the snapshot durable, then rewrite the log to hold only `entries` after it."""
        await self._replace("snapshot", snapshot)
        self._first = entries[0]["index"] if entries else snapshot["index"] + 1
        await self._rewrite(entries)

    async def _replace(self, name: str, record: dict[str, Any]) -> None:
        temporary = self._path(name + ".tmp")
        await fs.write_file(temporary, frames.encode(record), durable=True)
        await fs.rename(temporary, self._path(name))
        await fs.fsync_dir(self.directory)

    async def append(self, entries: list[Entry]) -> None:
        """Append entries to the log; durable on return."""
        if not entries:
            return
        encoded = [frames.encode_entry(entry) for entry in entries]
        offset = self._ends[-1] if self._ends else 0
        assert self._file is not None
        await self._file.pwrite(b"".join(encoded), offset)
        for record in encoded:
            offset += len(record)
            self._ends.append(offset)
        await self._sync()

    async def truncate_from(self, index: int) -> None:
        """Drop entries from `index` on (a conflicting suffix); durable on return."""
        keep = index - self._first
        if keep < 0 or keep >= len(self._ends):
            return
        del self._ends[keep:]
        assert self._file is not None
        await self._file.truncate(self._ends[-1] if self._ends else 0)
        await self._sync()

    async def _sync(self) -> None:
        assert self._file is not None
        if buggify("kvstore: a slow fsync"):
            await asyncio.sleep(random.uniform(0.01, 0.1))
        if not bugs.planted("ack_before_fsync"):
            await self._file.fsync()

    async def _rewrite(self, entries: list[Entry]) -> None:
        """Replace the log with `entries`, durably, through a new file and a rename."""
        if self._file is not None:
            await self._file.close()
        encoded = [frames.encode_entry(entry) for entry in entries]
        temporary = self._path("log.tmp")
        await fs.write_file(temporary, b"".join(encoded), durable=True)
        await fs.rename(temporary, self._path("log"))
        await fs.fsync_dir(self.directory)
        self._file = await fs.open(self._path("log"), "r+")
        self._ends = []
        offset = 0
        for record in encoded:
            offset += len(record)
            self._ends.append(offset)

    async def close(self) -> None:
        if self._file is not None:
            await self._file.close()
            self._file = None


def _resume_meta(recovered: Recovered, meta: dict[str, Any]) -> None:
    recovered.term, recovered.vote = int(meta["term"]), meta.get("vote")
    if bugs.planted("forget_vote"):
        recovered.vote = None
    recovered.damaged = recovered.damaged or meta.get("damaged") is True
    floor, bound = meta.get("vote_floor"), meta.get("bound")
    if isinstance(floor, int):
        recovered.vote_floor = floor
    if isinstance(bound, list) and len(bound) == 2 and all(isinstance(x, int) for x in bound):
        recovered.bound = (bound[0], bound[1])
    salvaged = meta.get("salvaged")
    if isinstance(salvaged, list):
        recovered.salvaged = [entry for entry in salvaged if _is_entry(entry)]


def _is_entry(record: Any) -> bool:
    """Does `record` look like a log entry (what a salvaged or stored record must be)?"""
    return (
        isinstance(record, dict)
        and isinstance(record.get("index"), int)
        and isinstance(record.get("term"), int)
        and "cmd" in record
    )


def _by_index(entries: list[Entry]) -> list[Entry]:
    """One entry per index (the later one listed wins), in index order."""
    return sorted({entry["index"]: entry for entry in entries}.values(), key=lambda e: e["index"])


def _continues(records: list[Entry], snapshot: dict[str, Any]) -> bool:
    """Do the log's `records` continue `snapshot`'s history? Not if the first record at
    the snapshot's index is of another term (a log the snapshot replaced)."""
    for record in records:
        if _is_entry(record) and record["index"] == snapshot["index"]:
            return bool(record["term"] == snapshot["term"])
    return True


def _contiguous(records: list[Entry], base: int) -> list[Entry]:
    """The entries after `base`, stopping at the first gap (a damaged or stale record)."""
    entries: list[Entry] = []
    for record in records:
        index = record.get("index")
        if not isinstance(index, int) or index <= base:
            continue
        if index != base + len(entries) + 1:
            break
        entries.append(record)
    return entries
