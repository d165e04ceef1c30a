"""A kvstore group inside a seedbed `Simulation`, watched by the protocol's own oracles.

`Cluster(sim)` adds one host per replica running the production `serve`
(only the addresses differ: node names instead of IP addresses), and an
`Oracle` (see `oracles`) that every replica reports to. The oracle checks,
as the run goes, the safety claims of Raft and the promises a replica makes
(what it acknowledged survives its restart; what it answered ok was applied)
with `seedbed.always`: a violation fails the run at the instant it happens,
with the seed and the replay command. A replica's loss is excused only by
damage the store itself reported, with damage its disk did behind the
report (`_disk_damage`).

`settled()` is the liveness claim checked after the faults stop: one leader
that every replica follows in the same term, all at the same commit index.
"""

from __future__ import annotations

import posixpath
import random
from typing import Any

import seedbed
from examples.kvstore.oracles import SAME_ENTRY, Oracle
from examples.kvstore.raft import Timing
from examples.kvstore.server import serve
from seedbed import fs

NAMES = ("n1", "n2", "n3")
PORT = 7000
DATA = "/var/lib/kvstore"
__all__ = ["DATA", "NAMES", "PORT", "SAME_ENTRY", "Cluster", "Oracle"]


class Cluster:
    """Replicas `names` on `sim`, their oracle, and handles on the live replicas."""

    def __init__(
        self,
        sim: seedbed.Simulation,
        names: tuple[str, ...] = NAMES,
        timing: Timing | None = None,
        lose_meta: float = 0.0,
    ) -> None:
        self.sim = sim
        self.names = names
        self.peers = {name: (name, PORT) for name in names}
        self.oracle = Oracle(self._disk_damage)
        self.timing = timing or Timing()
        # The chance that a replica restarts without its meta file (term and vote),
        # lost at rest, or with it unreadable: a disk or an operator losing it.
        self.lose_meta = lose_meta
        self.starts = dict.fromkeys(names, 0)
        self.metas_lost = dict.fromkeys(names, 0)
        # Replicas that lost their meta file and have not come back sound since:
        # each with the incarnation it lost it in (its start was still to come).
        self.amnesiac: dict[str, Any] = {}
        for name in names:
            sim.host(name, self._main_of(name))

    def _main_of(self, name: str) -> Any:
        async def main() -> None:
            self.starts[name] += 1
            if self.starts[name] > 1 and self._may_lose_meta(name):
                # Marked before the first await: another replica starting meanwhile
                # must see this one as losing its meta file already.
                self.amnesiac[name] = self.oracle.replicas.get(name)
                await self._lose_meta(name)
            await serve(name, self.peers, DATA, timing=self.timing, observer=self.oracle)

        return main

    def _may_lose_meta(self, name: str) -> bool:
        """Lose `name`'s meta file now? Never while another replica is damaged: a
        replica that lost it votes for no one until repaired, and a group with a
        majority of those can elect no leader to repair them (an operator's case)."""
        replicas = self.oracle.replicas
        for other, lost_in in list(self.amnesiac.items()):  # insertion order
            now = replicas.get(other)
            if now is not lost_in and now is not None and not now.damaged:
                del self.amnesiac[other]  # started since, and repaired
        others_sound = all(
            not replicas[other].damaged
            for other in self.names
            if other in replicas and other != name
        )
        if not self.lose_meta or not others_sound or set(self.amnesiac) - {name}:
            return False
        return random.random() < self.lose_meta

    async def _lose_meta(self, name: str) -> None:
        """Take replica `name`'s meta file away before it starts: gone, or garbage."""
        path = posixpath.join(DATA, "meta")
        if not await fs.exists(path):
            del self.amnesiac[name]
            return
        if random.random() < 0.5:
            await fs.remove(path)
        else:
            await fs.write_file(path, b"\x00lost\x00" * 4, durable=True)
        await fs.fsync_dir(DATA)
        self.metas_lost[name] += 1
        seedbed.reachable("kvstore: a replica restarted without its meta file (scenario)")

    def _disk_damage(self, name: str) -> int:
        """Damage node `name`'s data suffered at rest or on its way back: its simulated
        disk's, and the meta files this cluster took away (`lose_meta`)."""
        counts = self.sim.nodes.get(name).disk.fault_counts
        damage: int = counts["corrupt_read"] + counts["misdirect_write"]
        return damage + self.metas_lost[name]

    def settled(self) -> bool:
        """One leader, followed by every replica in its term, all at one commit index."""
        replicas = self.oracle.replicas
        live = [replicas[name] for name in self.names if name in replicas]
        if len(live) != len(self.names):
            return False
        leaders = [replica for replica in live if replica.role == "leader"]
        if len(leaders) != 1:
            return False
        term, commit = leaders[0].term, leaders[0].commit
        return all(
            replica.term == term
            and replica.leader == leaders[0].name
            and replica.commit == commit
            and not replica.damaged
            for replica in live
        )

    def describe(self) -> str:
        """Each live replica's role, term, leader and commit index, for failure messages."""
        replicas = self.oracle.replicas
        return ", ".join(
            f"{name}: {r.role} term {r.term} leader {r.leader} commit {r.commit}"
            + (" damaged" if r.damaged else "")
            for name, r in ((name, replicas[name]) for name in self.names if name in replicas)
        )
