"""A kvstore group inside a seedbed `Simulation`, watched by the protocol's own oracles.

`Cluster(sim)` adds one host per replica running the production `serve`
(only the addresses differ: node names instead of IP addresses), and an
`Oracle` that every replica reports to. The oracle checks, as the run goes,
the safety claims of Raft with `seedbed.always` (a violation fails the run
at the instant it happens, with the seed and the replay command):

- at most one leader per term, and at most one vote per replica and term;
- a replica's commit index never goes backwards (within one incarnation: a
  restart begins again from its snapshot, as Raft's volatile commit index does);
- every replica applies the same command at the same index (state machine
  safety: a lost acknowledged write shows up here, or in the history).

`settled()` is the liveness claim checked after the faults stop: one leader
that every replica follows in the same term, all at the same commit index.
"""

from __future__ import annotations

import json
from typing import Any

import seedbed
from examples.kvstore.raft import Replica, Timing
from examples.kvstore.server import serve
from seedbed import always

NAMES = ("n1", "n2", "n3")
PORT = 7000
DATA = "/var/lib/kvstore"
SAME_ENTRY = "kvstore: every replica applies the same entry at an index"


class Oracle:
    """Watches every replica through the `raft.Observer` calls."""

    def __init__(self) -> None:
        self.leaders: dict[int, str] = {}
        self.votes: dict[tuple[str, int], str] = {}
        self.commits: dict[str, int] = {}
        self.entries: dict[int, tuple[int, dict[str, Any]]] = {}
        self.max_commit = 0
        self.replicas: dict[str, Replica] = {}  # the live incarnation of each

    def started(self, replica: Replica) -> None:
        self.replicas[replica.name] = replica
        self.commits[replica.name] = 0

    def voted(self, name: str, term: int, candidate: str) -> None:
        first = self.votes.setdefault((name, term), candidate)
        always(
            first == candidate,
            "kvstore: a replica votes for one candidate per term",
            node=name,
            term=term,
            first=first,
            second=candidate,
        )

    def leader(self, name: str, term: int) -> None:
        elected = self.leaders.setdefault(term, name)
        always(
            elected == name,
            "kvstore: at most one leader per term",
            term=term,
            first=elected,
            second=name,
        )

    def committed(self, name: str, index: int) -> None:
        before = self.commits.get(name, 0)
        always(
            index >= before,
            "kvstore: a replica's commit index never goes backwards",
            node=name,
            was=before,
            now=index,
        )
        self.commits[name] = index
        self.max_commit = max(self.max_commit, index)

    def applied(self, name: str, index: int, term: int, command: dict[str, Any]) -> None:
        # Compared as values (commands are never changed once logged); rendered
        # only when they differ, since this runs for every entry on every replica.
        first = self.entries.setdefault(index, (term, command))
        if first == (term, command):
            always(True, SAME_ENTRY)
            return
        always(
            False,
            SAME_ENTRY,
            node=name,
            index=index,
            first=f"term {first[0]}: {json.dumps(first[1], sort_keys=True)[:80]}",
            now=f"term {term}: {json.dumps(command, sort_keys=True)[:80]}",
        )


class Cluster:
    """Replicas `names` on `sim`, their oracle, and handles on the live replicas."""

    def __init__(
        self, sim: seedbed.Simulation, names: tuple[str, ...] = NAMES, timing: Timing | None = None
    ) -> None:
        self.sim = sim
        self.names = names
        self.peers = {name: (name, PORT) for name in names}
        self.oracle = Oracle()
        self.timing = timing or Timing()
        for name in names:
            sim.host(name, self._main_of(name))

    def _main_of(self, name: str) -> Any:
        async def main() -> None:
            await serve(name, self.peers, DATA, timing=self.timing, observer=self.oracle)

        return main

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
