"""kvstore: a replica's log at the edges of its snapshots, on a real disk.

Two held-out mutants of the store survived every scenario because the
state they broke was seen by no oracle until much later (see
docs/how-to/store-oracles.md, "A held-out proxy"): a storage whose first
index was one off after a snapshot that emptied the log (it cuts the wrong
bytes at the next truncation, seen only by a restart before the log is
rewritten), and a follower keeping its own entries of an older term after a
leader's snapshot that ended inside them. Here the correct store handles
both edges, and the oracles that now watch them fail on the broken state.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _raftmsg import append, noop_entries
from examples.kvstore.machine import Machine
from examples.kvstore.oracles import LOG_ACCOUNT, TERMS_ORDERED, Oracle
from examples.kvstore.raft import Replica, Timing
from examples.kvstore.storage import Storage

PEERS = {name: (name, 7000) for name in ("n1", "n2", "n3")}


def _snapshot(leader: str, term: int, index: int) -> dict[str, Any]:
    state = {"index": index, "term": term, "state": Machine().snapshot()}
    return {"type": "snapshot", "from": leader, "term": term, "snapshot": state}


async def _replica(directory: Path, oracle: Oracle, every: int = 64) -> Replica:
    """Replica n1 started from `directory`, as `Replica.run` starts it, reporting to `oracle`."""
    storage = Storage(str(directory))
    replica = Replica("n1", PEERS, storage, timing=Timing(snapshot_every=every), observer=oracle)
    replica._send = lambda *args, **fields: None  # type: ignore[method-assign]
    replica._resume(await storage.load())
    oracle.started(replica)
    return replica


def test_a_snapshot_ending_inside_a_stale_tail_cuts_the_tail(tmp_path: Path) -> None:
    # n1 holds 1-5 of term 1 (a deposed leader's stale tail after 2); the term-2
    # leader's snapshot ends at 3: what follows it in n1's log conflicts, and goes.
    async def main() -> Replica:
        oracle = Oracle()
        first = await _replica(tmp_path, oracle)
        await first._on_message(append("n2", 1, 0, 0, noop_entries(1, 5, term=1), commit=2))
        await first._on_message(_snapshot("n3", 2, 3))
        assert (first.log.snap_index, first.log.snap_term, first.log.entries) == (3, 2, [])
        assert first.storage.span() == (4, 3)  # the file holds nothing after the snapshot
        await first.storage.close()
        return await _replica(tmp_path, oracle)

    restarted = asyncio.run(main())
    assert (restarted.log.snap_index, restarted.log.last_index, restarted.log.last_term) == (
        3,
        3,
        2,
    )


class CrashBeforeRewrite(Storage):
    """A disk that fails once a snapshot is in place, before the log is rewritten after it
    (a crash there, or a failed fsync, which restarts the replica from its disk)."""

    async def save_snapshot(self, snapshot: dict[str, Any], entries: list[Any]) -> None:
        await self._replace("snapshot", snapshot)
        raise OSError("simulated crash between the snapshot and the log's rewrite")


def test_a_crash_before_the_log_is_rewritten_drops_the_superseded_log(tmp_path: Path) -> None:
    # deposed_leaders seed 44 (found by the term-order check): the snapshot ending
    # inside the stale tail was durable, the old log still held 4-5 of term 1, and
    # recovery put them after the snapshot of term 2.
    async def main() -> Replica:
        oracle = Oracle()
        storage = CrashBeforeRewrite(str(tmp_path))
        replica = Replica("n1", PEERS, storage, observer=oracle)
        replica._send = lambda *args, **fields: None  # type: ignore[method-assign]
        replica._resume(await storage.load())
        oracle.started(replica)
        await replica._on_message(append("n2", 1, 0, 0, noop_entries(1, 5, term=1), commit=2))
        with pytest.raises(OSError, match="simulated crash"):
            await replica._on_message(_snapshot("n3", 2, 3))
        await storage.close()
        return await _replica(tmp_path, oracle)  # checks the term order at the start

    restarted = asyncio.run(main())
    assert (restarted.log.snap_index, restarted.log.snap_term, restarted.log.entries) == (3, 2, [])
    assert restarted.bound == (0, 0) and not restarted.damaged  # superseded, not damaged


def test_an_older_term_kept_after_a_snapshot_fails_the_term_order_check(tmp_path: Path) -> None:
    async def main() -> None:
        oracle = Oracle()
        first = await _replica(tmp_path, oracle)
        await first._on_message(append("n2", 1, 0, 0, noop_entries(1, 5, term=1), commit=2))
        first.log.compact(3, 2)  # what a follower that kept its tail would hold: 4-5 of term 1
        oracle.snapshotted("n1", 3, 2)

    with pytest.raises(AssertionError, match=TERMS_ORDERED):
        asyncio.run(main())


def test_a_cut_after_a_snapshot_that_emptied_the_log_leaves_the_newer_entry(
    tmp_path: Path,
) -> None:
    # 1-3 committed and snapshotted (the log is empty after it), then 4-5 of term 1
    # appended and cut by a term-2 leader's 4: the file must hold just the new 4.
    async def main() -> Replica:
        oracle = Oracle()
        first = await _replica(tmp_path, oracle, every=3)
        await first._on_message(append("n2", 1, 0, 0, noop_entries(1, 3, term=1), commit=3))
        assert (first.log.snap_index, first.log.entries) == (3, [])
        await first._on_message(append("n2", 1, 3, 1, noop_entries(4, 5, term=1), commit=3))
        await first._on_message(append("n3", 2, 3, 1, noop_entries(4, 4, term=2), commit=3))
        assert first.storage.span() == (4, 4)
        await first.storage.close()
        return await _replica(tmp_path, oracle, every=3)

    restarted = asyncio.run(main())
    assert restarted.log.entries == noop_entries(4, 4, term=2)


def test_a_storage_account_one_entry_off_fails_at_the_next_acknowledgement(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        oracle = Oracle()
        first = await _replica(tmp_path, oracle, every=3)
        await first._on_message(append("n2", 1, 0, 0, noop_entries(1, 3, term=1), commit=3))
        first.storage._first -= 1  # the account a first index one too low gives
        await first._on_message(append("n2", 1, 3, 1, noop_entries(4, 5, term=1), commit=3))

    with pytest.raises(AssertionError, match=LOG_ACCOUNT):
        asyncio.run(main())
