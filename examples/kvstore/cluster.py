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

from typing import Any

import seedbed
from examples.kvstore.oracles import SAME_ENTRY, Oracle
from examples.kvstore.raft import Timing
from examples.kvstore.server import serve

NAMES = ("n1", "n2", "n3")
PORT = 7000
DATA = "/var/lib/kvstore"
__all__ = ["DATA", "NAMES", "PORT", "SAME_ENTRY", "Cluster", "Oracle"]


class Cluster:
    """Replicas `names` on `sim`, their oracle, and handles on the live replicas."""

    def __init__(
        self, sim: seedbed.Simulation, names: tuple[str, ...] = NAMES, timing: Timing | None = None
    ) -> None:
        self.sim = sim
        self.names = names
        self.peers = {name: (name, PORT) for name in names}
        self.oracle = Oracle(self._disk_damage)
        self.timing = timing or Timing()
        for name in names:
            sim.host(name, self._main_of(name))

    def _main_of(self, name: str) -> Any:
        async def main() -> None:
            await serve(name, self.peers, DATA, timing=self.timing, observer=self.oracle)

        return main

    def _disk_damage(self, name: str) -> int:
        """Damage node `name`'s simulated disk did to data at rest or on its way back."""
        counts = self.sim.nodes.get(name).disk.fault_counts
        damage: int = counts["corrupt_read"] + counts["misdirect_write"]
        return damage

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
