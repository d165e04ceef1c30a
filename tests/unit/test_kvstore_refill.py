"""kvstore: a replica whose log lost records in the middle refills the hole from a peer.

On CPython 3.12 a seed of the damaged-logs test once never settled: n2, the
old leader, lost record 217 of a log ending at (term 1, index 225), and held
the only copies of 224-225; n1 held up to 223; n3 had lost its meta file.
n2 could not campaign (a hole), n1 could win no vote (n2's bound refused its
shorter log, n3 abstained as damaged). Raft's log matching gives the way
out without a leader: a peer whose log matches n2's at its last intact entry
and at one of the records salvaged after the hole holds the lost ones.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from examples.kvstore import frames
from examples.kvstore.raft import Replica, _refilled
from examples.kvstore.storage import Storage

PEERS = {name: (name, 7000) for name in ("n1", "n2", "n3")}


def _entries(first: int, last: int, term: int = 1) -> list[dict[str, Any]]:
    return [{"index": i, "term": term, "cmd": {"n": i}} for i in range(first, last + 1)]


def _damage_record(path: Path, record: int) -> None:
    """Flip a bit inside the body of the `record`-th frame (0-based) of a log file."""
    data = bytearray(path.read_bytes())
    offset = 0
    for _ in range(record):
        offset += frames.HEADER.size + frames.HEADER.unpack_from(data, offset)[0]
    data[offset + frames.HEADER.size + 3] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("offered", "salvaged", "bound", "refilled"),
    [
        # the peer matches the salvaged record 4: its 3 is the lost one, then our 5
        (_entries(3, 4), _entries(4, 5), (1, 5), [3, 4, 5]),
        # the peer holds the bound entry itself: nothing salvaged needed
        (_entries(3, 6), [], (1, 5), [3, 4, 5]),
        # the peer stops inside the hole: no anchor, no refill
        (_entries(3, 3), _entries(4, 5), (1, 5), []),
        # the peer's 4 is of another term (another leader's): no match, no refill
        (_entries(3, 4, term=2), _entries(4, 5), (1, 5), []),
        # a run that skips an index is not what the peer owes
        ([*_entries(3, 3), *_entries(5, 5)], _entries(4, 5), (1, 5), []),
        # salvaged records that stop short of the bound do not restore the log
        (_entries(3, 4), _entries(4, 4), (1, 5), []),
    ],
)
def test_a_hole_is_refilled_only_up_to_the_entry_the_log_knew_it_had(
    offered: list[dict[str, Any]],
    salvaged: list[dict[str, Any]],
    bound: tuple[int, int],
    refilled: list[int],
) -> None:
    assert [entry["index"] for entry in _refilled(offered, salvaged, 2, bound)] == refilled


def test_a_salvaged_record_of_a_lower_term_than_the_anchor_is_not_taken() -> None:
    # A stale record (a truncated suffix's, found by the salvage scan) after the
    # anchor would give the log a term going down: the refill refuses it.
    offered = _entries(3, 4, term=2)
    salvaged = [*_entries(4, 4, term=2), *_entries(5, 5, term=1)]
    assert _refilled(offered, salvaged, 2, (1, 5)) == []


def test_a_holed_replica_refills_from_a_peer_durably_and_may_lead_again(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.save_meta(1, "n2")
        await storage.append(_entries(1, 5))
        await storage.close()
        _damage_record(tmp_path / "log", 2)  # index 3 lost; 4 and 5 salvaged
        again = await Storage(str(tmp_path)).load()  # a second crash: meta keeps them
        replica = Replica("n2", PEERS, Storage(str(tmp_path)))
        replica._resume(await replica.storage.load())
        before = replica._eligible()
        peer = Replica("n1", PEERS, Storage(str(tmp_path / "peer")))
        peer._resume(await peer.storage.load())
        for entry in _entries(1, 4):  # n1 holds 1-4: the lost 3, and 4 to anchor on
            peer.log.append(entry)
        sent: list[dict[str, Any]] = []
        peer._send = lambda to, kind, **fields: sent.append({"type": kind, **fields})  # type: ignore[method-assign]
        request = {"from": "n2", "term": 1, "last_index": 2, "last_term": 1, "end": 5}
        await peer._on_refill(request)
        await replica._on_refill_reply({"from": "n1", "term": 1, **sent[0]})
        after = replica._eligible()
        await replica.storage.close()
        reloaded = await Storage(str(tmp_path)).load()
        return {"again": again, "before": before, "after": after, "reloaded": reloaded}

    result = asyncio.run(main())
    assert [e["index"] for e in result["again"].salvaged] == [4, 5]
    assert result["again"].bound == (1, 5)
    assert result["before"] is False and result["after"] is True
    reloaded = result["reloaded"]
    assert [e["index"] for e in reloaded.entries] == [1, 2, 3, 4, 5]
    assert reloaded.entries[2] == _entries(3, 3)[0]  # the peer's copy of the lost record
    assert reloaded.bound == (0, 0) and reloaded.salvaged == []


def test_a_peer_whose_log_differs_at_the_requesters_end_sends_nothing(tmp_path: Path) -> None:
    async def main() -> list[object]:
        peer = Replica("n1", PEERS, Storage(str(tmp_path)))
        peer._resume(await peer.storage.load())
        for entry in _entries(1, 4, term=2):
            peer.log.append(entry)
        sent: list[object] = []
        peer._send = lambda *args, **fields: sent.append(fields)  # type: ignore[method-assign]
        await peer._on_refill({"from": "n2", "term": 1, "last_index": 2, "last_term": 1, "end": 5})
        return sent

    assert asyncio.run(main()) == []


def test_replicas_whose_state_machines_disagree_at_an_index_fail_the_run() -> None:
    # The same log must give every replica the same result at each index: a
    # replica that forgot its dedup table on a restore (a held-out mutant of
    # bench/mutants_heldout.py that no other oracle saw) re-executes a retry.
    from examples.kvstore.oracles import SAME_RESULT, Oracle

    oracle = Oracle()
    command = {"op": "append", "key": "k", "value": "v", "client": "c~1", "seq": 3}
    oracle.applied("n1", 7, 2, command, {"index": 5})  # deduplicated: the first result
    oracle.applied("n2", 7, 2, command, {"index": 5})
    with pytest.raises(AssertionError, match=SAME_RESULT):
        oracle.applied("n3", 7, 2, command, {"index": 7})  # applied again


def test_a_snapshot_whose_term_is_not_its_last_entrys_fails_the_run() -> None:
    # A snapshot's term is what log matching compares at its end: a follower's
    # prev_term check there, a voter's last_term once the log is empty. Taken
    # or installed, it must be the term of the entry committed at its index
    # (not, say, the term of the log's last entry after a leader change).
    from examples.kvstore.oracles import SNAPSHOT_TERM, Oracle

    oracle = Oracle()
    oracle.applied("n1", 4, 1, {"op": "noop"}, {"index": 4})
    oracle.snapshotted("n1", 4, 1)  # the committed entry's term: held
    oracle.snapshotted("n2", 9, 3)  # an index never applied: nothing to compare
    with pytest.raises(AssertionError, match=SNAPSHOT_TERM):
        oracle.snapshotted("n2", 4, 3)


@pytest.mark.parametrize(
    ("report", "disk_damaged", "excused"),
    [
        ("nothing", True, False),
        ("a hole below its bound", True, True),
        ("damage", True, True),
        ("a hole below its bound", False, False),
        ("damage", False, False),
    ],
)
def test_a_restart_that_lost_acknowledged_entries_is_excused_only_by_damage_it_reported(
    tmp_path: Path, report: str, disk_damaged: bool, excused: bool
) -> None:
    # The oracle once excused any restart after the disk counted a fault (a
    # corrupt read): a store that took a bad read for a torn tail and dropped
    # an acknowledged, committed entry passed. The store's own report of the
    # loss (damaged, or a hole below its vote bound) excuses it, and only with
    # damage done by the disk behind it: a store calling its own bug damage
    # on an intact disk (a snapshot it never wrote) is held to its promise.
    from examples.kvstore.oracles import KEPT, Oracle

    damage = {"n1": 0}

    async def main() -> None:
        oracle = Oracle(damage.__getitem__)
        first = Replica("n1", PEERS, Storage(str(tmp_path / "a")))
        first._resume(await first.storage.load())
        oracle.started(first)
        oracle.acknowledged("n1", 1, 3, 1)  # entries 1-3 of term 1, durably held
        damage["n1"] += disk_damaged  # a misdirected write, say
        again = Replica("n1", PEERS, Storage(str(tmp_path / "b")))
        again._resume(await again.storage.load())
        for entry in _entries(1, 2):
            again.log.append(entry)  # entry 3 is gone
        await again.storage.append(_entries(1, 2))  # and its file holds what its log does
        again.term = 1
        if report == "a hole below its bound":
            again.bound = (1, 3)
        elif report == "damage":
            again.damaged = True
        oracle.started(again)

    if excused:
        asyncio.run(main())
    else:
        with pytest.raises(AssertionError, match=KEPT):
            asyncio.run(main())
