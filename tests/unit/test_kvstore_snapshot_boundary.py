"""kvstore: a deposed leader whose stale tail begins just after a successor's snapshot.

The successor's snapshot ends at S, the entry its stale tail replaced; the
deposed leader committed up to S - 1 and holds its own, older entries from S
on. What the successor sent it while it was cut off is lost, so it rejects
the successor's next append with the hint S (its commit plus one): the
leader's next index for it lands exactly on the snapshot's last entry.
Entries from S would need the term of S - 1, which only the snapshot now
holds, and an append from S + 1 fails on its stale S; only the snapshot
brings it back. A leader that sent entries there instead (as long as fewer
than a batch followed the snapshot) would get the same hint back and send
the same append again, for as long as its snapshot stayed where it was.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from _raftmsg import noop_entries
from examples.kvstore.raft import Replica, Timing
from examples.kvstore.storage import Storage

PEERS = {name: (name, 7000) for name in ("n1", "n2", "n3")}
EVERY = 4  # the successor's snapshot: its no-op at 4, the first index of the stale tail
ROUNDS = 20  # message exchanges allowed (the snapshot needs two)


async def _replica(directory: Path, name: str, outbox: list[dict[str, Any]]) -> Replica:
    """Replica `name` on a real disk, its messages collected in `outbox`, not sent."""
    storage = Storage(str(directory / name))
    replica = Replica(name, PEERS, storage, timing=Timing(snapshot_every=EVERY))

    def send(peer: str, kind: str, **fields: Any) -> None:
        outbox.append({"to": peer, "type": kind, "from": name, "term": replica.term, **fields})

    replica._send = send  # type: ignore[method-assign]
    replica._resume(await storage.load())
    return replica


async def _deliver(outbox: list[dict[str, Any]], to: Replica) -> None:
    """Hand `to` the messages addressed to it (in order), and drop them from `outbox`."""
    mine = [message for message in outbox if message["to"] == to.name]
    outbox[:] = [message for message in outbox if message["to"] != to.name]
    for message in mine:
        await to._on_message({key: value for key, value in message.items() if key != "to"})


def test_a_stale_tail_after_the_successors_snapshot_is_replaced_by_the_snapshot(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[Replica, Replica, int]:
        outbox: list[dict[str, Any]] = []
        leader = await _replica(tmp_path, "n1", outbox)
        deposed = await _replica(tmp_path, "n2", outbox)
        # Term 1, n2 leading: 1-3 reached n1 and committed; 4-6 reached no one else
        # (n2's log is built here by an append, as if from a term-1 peer).
        term1 = {"type": "append", "term": 1, "prev_index": 0, "prev_term": 0, "commit": 3}
        await leader._on_message({**term1, "from": "n2", "entries": noop_entries(1, 3, term=1)})
        await deposed._on_message({**term1, "from": "n3", "entries": noop_entries(1, 6, term=1)})
        # n2 is cut off; n1 wins term 2 with n3's vote, commits its no-op at 4 with
        # n3, snapshots it (every 4 entries), and appends 5. n2 gets none of it.
        await leader._campaign()
        await leader._on_message({"type": "vote_reply", "from": "n3", "term": 2, "granted": True})
        success = {"type": "append_reply", "from": "n3", "term": 2, "success": True, "hint": 0}
        await leader._on_message({**success, "match": 4})
        await leader._append_local([{"op": "noop"}])
        assert (leader.role, leader.log.snap_index, leader.log.last_index) == ("leader", 4, 5)
        outbox.clear()
        # Healed: heartbeats until the two agree (or the rounds run out).
        rounds = 0
        while rounds < ROUNDS and deposed.log.last_index != leader.log.last_index:
            rounds += 1
            await leader._tick()
            await _deliver(outbox, deposed)
            await _deliver(outbox, leader)
        return leader, deposed, rounds

    leader, deposed, rounds = asyncio.run(main())
    assert rounds < ROUNDS, "the deposed leader never caught up"
    assert (deposed.log.snap_index, deposed.log.snap_term) == (4, 2)
    assert deposed.log.entries == leader.log.entries == noop_entries(5, 5, term=2)
