"""kvstore: a replica that crashes inside a truncation a newer leader asked for.

stale_leader seeds 232 and 778 failed "what a replica acknowledged survives
its restart": a leader cut off from its peers appended entries it could not
commit (a stale tail, acknowledged to the oracle as the leader counting
itself); once healed, a newer leader's conflicting entry made it truncate
that tail, and a crash just before the truncation's fsync left the file
truncated. Raft lets a replica lose exactly those entries, but the replica
told the oracle of the cut only once it was durable, so the oracle held the
restarted replica to them. The cut is now reported before the disk is
touched. Either outcome of the crash (the cut on the disk or not) must pass;
entries below the cut stay promised, and a disk that lost them must fail.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _raftmsg import append
from examples.kvstore.oracles import KEPT, Oracle
from examples.kvstore.raft import Replica
from examples.kvstore.storage import Storage

PEERS = {name: (name, 7000) for name in ("n1", "n2", "n3")}


def _entries(first: int, last: int, term: int) -> list[dict[str, Any]]:
    return [{"index": i, "term": term, "cmd": {"n": i}} for i in range(first, last + 1)]


class CrashInTruncation(Storage):
    """A disk that fails inside `truncate_from`: after cutting the file (`cut`), before
    its fsync, as a crash there or a failed fsync (which restarts the replica) does;
    or before cutting it at all (`not cut`), as a crash that lost the unsynced cut."""

    def __init__(self, directory: str, *, cut: bool) -> None:
        super().__init__(directory)
        self.cut = cut

    async def truncate_from(self, index: int) -> None:
        if self.cut:
            keep = index - self._first
            assert self._file is not None
            await self._file.truncate(self._ends[keep - 1] if keep else 0)
        raise OSError("simulated crash inside the truncation")


async def _replica(directory: Path, oracle: Oracle, storage: Storage | None = None) -> Replica:
    """Replica n1 started from `directory`, as `Replica.run` starts it, reporting to `oracle`."""
    replica = Replica("n1", PEERS, storage or Storage(str(directory)), observer=oracle)
    replica._send = lambda *args, **fields: None  # type: ignore[method-assign]
    replica._resume(await replica.storage.load())
    oracle.started(replica)
    return replica


async def _crash_in_truncation(directory: Path, oracle: Oracle, *, cut: bool) -> Replica:
    """n1 acknowledges 1-5 of term 1; a term-2 leader's entry 4 conflicts; it crashes inside
    the cut and restarts from its disk."""
    storage = CrashInTruncation(str(directory), cut=cut)
    first = await _replica(directory, oracle, storage)
    await first._on_message(append("n2", 1, 0, 0, _entries(1, 5, term=1)))
    with pytest.raises(OSError, match="simulated crash"):
        await first._on_message(append("n3", 2, 3, 1, _entries(4, 4, term=2)))
    await storage.close()
    return await _replica(directory, oracle)


@pytest.mark.parametrize("cut", [True, False], ids=["cut-on-disk", "cut-lost"])
def test_a_crash_inside_a_newer_leaders_truncation_keeps_the_promises(
    tmp_path: Path, cut: bool
) -> None:
    oracle = Oracle()
    restarted = asyncio.run(_crash_in_truncation(tmp_path, oracle, cut=cut))
    assert oracle.restarts_checked == 1  # held to its promises, and they held
    assert restarted.log.last_index == (3 if cut else 5)
    assert oracle.acked["n1"] == [(3, 1)]  # what it still owes: 1-3


def test_losing_entries_below_the_cut_still_fails_the_restart(tmp_path: Path) -> None:
    # The point cut away (5 of term 1) also stood for 1-3, which the replica
    # still holds and owes: a disk that lost them (cut from 2, say) is caught.
    async def main() -> None:
        oracle = Oracle()
        storage = CrashInTruncation(str(tmp_path), cut=False)
        first = await _replica(tmp_path, oracle, storage)
        await first._on_message(append("n2", 1, 0, 0, _entries(1, 5, term=1)))
        with pytest.raises(OSError):
            await first._on_message(append("n3", 2, 3, 1, _entries(4, 4, term=2)))
        await Storage.truncate_from(storage, 2)  # the wrong cut, made durable
        await storage.close()
        await _replica(tmp_path, oracle)

    with pytest.raises(AssertionError, match=KEPT):
        asyncio.run(main())
