"""A Raft replica (Ongaro and Ousterhout, "In Search of an Understandable Consensus
Algorithm", 2014): leader election, log replication, snapshots, and recovery
from what the disk kept.

Everything a replica does happens in one task that takes events from its
inbox one at a time (a peer's message, a batch of client requests, a timer
tick) and finishes each, fsyncs included, before the next: no state is ever
shared between two half-done handlers. Every acknowledgement (a vote, an
appended entry, a leader counting itself) happens only after the data it
promises is durable.

Beyond the paper: a replica whose meta or snapshot file is lost (so its
vote, or records it may have acknowledged, are gone; see `storage`) neither
votes nor campaigns until a leader has brought it up to that leader's commit
index, and then votes only in later terms, so a forgotten vote or a lost
entry cannot elect a second leader or lose a committed write. A replica that
lost records in the middle of its log but salvaged the ones after them still
knows its last entry, which is all Raft's vote rule compares: it votes (for
logs at least that complete) but does not campaign until its hole is
refilled; were it to abstain, two such replicas among three would wait for
ever for a leader only their votes could elect. A leader refills it, or,
with none, a peer: Raft's log matching says a peer's log that holds one of
the records salvaged after the hole (or the last entry) and this log's
last intact entry holds the lost ones between them, so the replica asks
its peers (`refill`) and takes their entries once they restore its log to
the last entry it knew. Without that, a replica whose hole held the only
copies of its last entries, with the other peers one behind it and one
damaged, could neither campaign nor vote for anyone who could (a 3.12
seed of the damaged-logs test). What it must remember of the damage (the
salvaged records too) is kept in its meta file, so a second crash cannot
make it forget.

Also beyond the paper, PreVote and leader stickiness (Ongaro's thesis, 9.6):
a replica whose election timeout passes first asks its peers whether they
would vote for it in the next term, without raising its own term or theirs,
and campaigns only once a quorum says yes. Peers say no while they heard
from a leader within the minimum election timeout, or when its log is
behind theirs. Without it, a replica with a stale log, cut off from the
leader, raised the term again and again, and the up-to-date replica, which
also campaigned in each of those terms, could not win a vote that the stale
one had already given itself: votes split until the partition healed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass
from typing import Any, Protocol

from examples.kvstore import bugs
from examples.kvstore.machine import Command, Machine, Result
from examples.kvstore.raftlog import Entry, RaftLog
from examples.kvstore.storage import Recovered, Storage
from examples.kvstore.transport import Mailbox, PeerLink
from seedbed import always, buggify, reachable, sometimes

log = logging.getLogger("kvstore.raft")

BATCH = 64  # entries per append message
REFILL_LIMIT = 8 * BATCH  # entries per refill reply (a hole and what follows it)


@dataclass(frozen=True)
class Timing:
    """How often a leader speaks, and how long followers wait before campaigning."""

    heartbeat: float = 0.1
    election_min: float = 0.5
    election_max: float = 1.0
    snapshot_every: int = 64  # applied entries between snapshots
    batch: int = BATCH  # entries per append message, at most (a transport's message limit)


class Observer(Protocol):
    """What a simulation's oracles watch; production passes None."""

    def started(self, replica: Replica) -> None: ...
    def voted(self, name: str, term: int, candidate: str) -> None: ...
    def leader(self, name: str, term: int) -> None: ...
    def acknowledged(self, name: str, term: int, index: int, entry_term: int) -> None: ...
    def truncated(self, name: str, index: int) -> None: ...
    def matched(self, name: str, term: int, peer: str, match: int) -> None: ...
    def committed(self, name: str, index: int) -> None: ...
    def snapshotted(self, name: str, index: int, term: int) -> None: ...
    def applied(
        self, name: str, index: int, term: int, command: Command, result: Result
    ) -> None: ...


class Restart(Exception):
    """Raised out of `Replica.run` to restart the replica from its disk (a test's fault)."""


class NotLeader(Exception):
    """The request reached a replica that cannot serve it; `leader` is a hint."""

    def __init__(self, leader: str | None) -> None:
        super().__init__(f"not the leader (leader: {leader})")
        self.leader = leader


class Replica:
    """One member of a Raft group of `peers` (which includes itself)."""

    def __init__(
        self,
        name: str,
        peers: dict[str, tuple[str, int]],
        storage: Storage,
        *,
        timing: Timing | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.name = name
        self.others = [peer for peer in peers if peer != name]
        self.links = {peer: PeerLink(peer, peers[peer]) for peer in self.others}
        self.quorum = len(peers) // 2 + 1
        self.storage = storage
        self.timing = timing or Timing()
        self.observer = observer
        self.inbox = Mailbox()
        self.role = "follower"
        self.term = 0
        self.vote: str | None = None
        self.leader: str | None = None
        self.log = RaftLog()
        self.snapshot: dict[str, Any] = {"index": 0, "term": 0, "state": Machine().snapshot()}
        self.machine = Machine()
        self.commit = 0
        self.damaged = False
        self.vote_floor = 0  # grant votes only in terms above this (damaged replicas)
        self.bound = (0, 0)  # (term, index): vote only for logs this complete (lost records)
        self.salvaged: list[Entry] = []  # records found after the hole (see `_on_refill_reply`)
        self.votes: list[str] = []
        self.prevotes: list[str] = []  # as a pre-candidate: who would vote for us next term
        self.heard = float("-inf")  # when a leader last spoke to this follower
        self.next_index: dict[str, int] = {}
        self.match_index: dict[str, int] = {}
        self.waiting: dict[int, tuple[int, asyncio.Future[Result]]] = {}
        self.deadline = 0.0
        self.restart_soon = False  # buggify: restart from disk at the next tick

    # -- life cycle ---------------------------------------------------------

    async def run(self) -> None:
        """Recover from disk, then serve events until cancelled (or crashed)."""
        self._resume(await self.storage.load())
        if self.observer is not None:
            self.observer.started(self)
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(link.run()) for link in self.links.values()]
        tasks.append(loop.create_task(self._ticker()))
        try:
            while True:
                await self._handle(await self.inbox.get())
        finally:
            for task in tasks:
                task.cancel()

    def _resume(self, recovered: Recovered) -> None:
        self.term, self.vote = recovered.term, recovered.vote
        self.damaged, self.vote_floor = recovered.damaged, recovered.vote_floor
        self.bound, self.salvaged = recovered.bound, recovered.salvaged
        self.term = max(self.term, self.bound[0])
        if recovered.snapshot is not None:
            self.snapshot = recovered.snapshot
            self.machine = Machine.restore(recovered.snapshot["state"])
            self.log = RaftLog(recovered.snapshot["index"], recovered.snapshot["term"])
            self.commit = recovered.snapshot["index"]
        for entry in recovered.entries:
            self.log.append(entry)
            self.term = max(self.term, entry["term"])  # a lost meta file still knows this much
        self._reset_deadline()
        log.info(
            "%s: recovered term %d, log to %d%s",
            self.name,
            self.term,
            self.log.last_index,
            " (damaged)" if self.damaged else "",
        )

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.timing.heartbeat)
            self.inbox.put(("tick", None))

    def _reset_deadline(self) -> None:
        span = random.uniform(self.timing.election_min, self.timing.election_max)
        if buggify("kvstore: an election timeout at its minimum (split votes)"):
            span = self.timing.election_min
        self.deadline = asyncio.get_running_loop().time() + span

    # -- the event loop -----------------------------------------------------

    async def _handle(self, event: tuple[str, Any]) -> None:
        kind, item = event
        if kind == "tick":
            await self._tick()
        elif kind == "client":
            batch = [item]
            rest = self.inbox.drain()
            batch += [other for other_kind, other in rest if other_kind == "client"]
            await self._on_requests(batch)
            for other in rest:
                if other[0] != "client":
                    await self._handle(other)
        else:
            await self._on_message(item)

    async def _tick(self) -> None:
        if self.restart_soon:
            raise Restart("buggify: a restart from disk just after voting")
        if self.role == "leader" and buggify("kvstore: a leader steps down (a long pause)"):
            await self._become_follower(self.term, None)
            self._reset_deadline()
        elif self.role == "leader":
            for peer in self.others:
                self._send_append(peer)
        elif self.role == "candidate" and asyncio.get_running_loop().time() < self.deadline:
            for peer in self.others:  # a lost request or a restarted voter: ask again
                if peer not in self.votes:
                    self._request_vote(peer)
        elif self.role == "precandidate" and asyncio.get_running_loop().time() < self.deadline:
            for peer in self.others:
                if peer not in self.prevotes:
                    self._request_prevote(peer)
        elif asyncio.get_running_loop().time() >= self.deadline and self._eligible():
            await self._start_prevote()
        elif asyncio.get_running_loop().time() >= self.deadline and self._holed():
            for peer in self.others:  # no leader to refill the hole: ask the peers
                self._send(peer, "refill", **self._log_end(), end=self.bound[1])

    def _eligible(self) -> bool:
        """May this replica lead? Not while records it may have acknowledged are missing."""
        return not self.damaged and not self._holed()

    def _holed(self) -> bool:
        """Did this log lose records that it knew came before its `bound`?"""
        return (self.log.last_term, self.log.last_index) < self.bound

    def _log_end(self) -> dict[str, int]:
        return {"last_index": self.log.last_index, "last_term": self.log.last_term}

    def status(self) -> dict[str, Any]:
        """Role, term, leader and log positions: what an operator (or a test) asks."""
        return {
            "type": "status",
            "name": self.name,
            "role": self.role,
            "term": self.term,
            "leader": self.leader,
            "commit": self.commit,
            "last_index": self.log.last_index,
            "snapshot_index": self.log.snap_index,
            "damaged": self.damaged,
        }

    def submit(self, command: Command) -> asyncio.Future[Result]:
        """Queue a client's command; the future resolves once it is applied."""
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self.inbox.put(("client", (command, future)))
        return future

    def deliver(self, message: dict[str, Any]) -> None:
        """Queue a message from a peer."""
        self.inbox.put(("peer", message))

    async def _on_message(self, message: dict[str, Any]) -> None:
        term = message.get("term")
        if not isinstance(term, int) or message.get("from") not in self.links:
            log.warning("%s: ignoring a malformed peer message %.80r", self.name, message)
            return
        if term > self.term:
            await self._become_follower(term, None)
        handler = _HANDLERS.get(str(message.get("type")))
        if handler is None:
            log.warning("%s: unknown message type %r", self.name, message.get("type"))
            return
        await handler(self, message)

    async def _persist_meta(self) -> None:
        if not self._holed():  # met (or a newer leader's entries passed it): done with
            self.bound, self.salvaged = (0, 0), []
        last = self.log.last_index
        self.salvaged = [entry for entry in self.salvaged if entry["index"] > last]
        await self.storage.save_meta(
            self.term,
            self.vote,
            damaged=self.damaged,
            vote_floor=self.vote_floor,
            bound=self.bound,
            salvaged=self.salvaged,
        )

    async def _become_follower(self, term: int, leader: str | None) -> None:
        if term > self.term:
            self.term, self.vote = term, None
            await self._persist_meta()
        if self.role == "leader":
            self._fail_waiting()
        self.role, self.leader = "follower", leader

    # -- elections ----------------------------------------------------------

    async def _start_prevote(self) -> None:
        """Ask whether a campaign in the next term could win, changing no one's term."""
        self.role, self.leader, self.prevotes = "precandidate", None, [self.name]
        self._reset_deadline()
        log.info("%s: asking for pre-votes for term %d", self.name, self.term + 1)
        for peer in self.others:
            self._request_prevote(peer)
        await self._count_prevotes()

    def _request_prevote(self, peer: str) -> None:
        self._send(
            peer,
            "prevote",
            proposed=self.term + 1,
            last_index=self.log.last_index,
            last_term=self.log.last_term,
        )

    async def _on_prevote(self, message: dict[str, Any]) -> None:
        proposed = message["proposed"]
        grant = (
            proposed > self.term
            and not self._leader_heard()
            and self._would_vote(proposed, message)
        )
        self._send(message["from"], "prevote_reply", granted=grant, proposed=proposed)

    def _would_vote(self, term: int, message: dict[str, Any]) -> bool:
        """Raft's vote rule plus this store's damage rules, for a vote or a pre-vote in `term`."""
        return (
            not self.damaged
            and term > self.vote_floor
            and self.log.up_to_date(message["last_index"], message["last_term"])
            and (message["last_term"], message["last_index"]) >= self.bound
        )

    def _leader_heard(self) -> bool:
        """Leader stickiness: a leader spoke within the minimum election timeout."""
        if self.role == "leader":
            return True
        recent = asyncio.get_running_loop().time() < self.heard + self.timing.election_min
        return self.leader is not None and recent

    async def _on_prevote_reply(self, message: dict[str, Any]) -> None:
        if self.role != "precandidate" or message["proposed"] != self.term + 1:
            return
        if message["granted"] and message["from"] not in self.prevotes:
            self.prevotes.append(message["from"])
        await self._count_prevotes()

    async def _count_prevotes(self) -> None:
        if self.role == "precandidate" and len(self.prevotes) >= self.quorum:
            reachable("kvstore: a pre-vote quorum let a replica campaign")
            await self._campaign()

    async def _campaign(self) -> None:
        self.term += 1
        self.role, self.vote, self.leader, self.votes = "candidate", self.name, None, [self.name]
        await self._persist_meta()
        if self.observer is not None:
            self.observer.voted(self.name, self.term, self.name)
        self._reset_deadline()
        log.info("%s: campaigning in term %d", self.name, self.term)
        for peer in self.others:
            self._request_vote(peer)
        await self._count_votes()

    def _request_vote(self, peer: str) -> None:
        self._send(peer, "vote", last_index=self.log.last_index, last_term=self.log.last_term)

    async def _on_vote(self, message: dict[str, Any]) -> None:
        candidate = message["from"]
        grant = (
            message["term"] == self.term
            and self.vote in (None, candidate)
            and self._would_vote(self.term, message)
        )
        if grant:
            self.vote = candidate
            await self._persist_meta()
            self._reset_deadline()
            self.restart_soon = buggify("kvstore: a replica restarts just after voting")
            if self.observer is not None:  # promised as the reply leaves, not before
                self.observer.voted(self.name, self.term, candidate)
        self._send(candidate, "vote_reply", granted=grant)

    async def _on_vote_reply(self, message: dict[str, Any]) -> None:
        if self.role != "candidate" or message["term"] != self.term or not message["granted"]:
            return
        if message["from"] not in self.votes:
            self.votes.append(message["from"])
        await self._count_votes()

    async def _count_votes(self) -> None:
        if self.role != "candidate" or len(self.votes) < self.quorum:
            return
        self.role, self.leader = "leader", self.name
        log.info("%s: leader of term %d", self.name, self.term)
        if self.observer is not None:
            self.observer.leader(self.name, self.term)
        reachable("kvstore: a leader was elected")
        self.next_index = {peer: self.log.last_index + 1 for peer in self.others}
        self.match_index = {peer: 0 for peer in self.others}
        await self._append_local([{"op": "noop"}])

    # -- replication, leader side --------------------------------------------

    async def _on_requests(self, batch: list[tuple[Command, asyncio.Future[Result]]]) -> None:
        accepted: list[tuple[Command, asyncio.Future[Result]]] = []
        for command, future in batch:
            if future.done():
                continue
            if command.get("op") == "get" and bugs.planted("follower_reads"):
                future.set_result(self.machine.read(str(command["key"])))
            elif self.role != "leader":
                future.set_exception(NotLeader(self.leader))
            else:
                accepted.append((command, future))
        if accepted:  # waiting before appending: the append may commit them at once
            first = self.log.last_index + 1
            for offset, (_, future) in enumerate(accepted):
                self.waiting[first + offset] = (self.term, future)
            await self._append_local([command for command, _ in accepted])

    async def _append_local(self, commands: list[Command]) -> int:
        """Append commands as entries of this term, durably; returns the first index."""
        first = self.log.last_index + 1
        entries = [
            {"index": first + offset, "term": self.term, "cmd": command}
            for offset, command in enumerate(commands)
        ]
        for entry in entries:
            self.log.append(entry)
        await self._store(entries)
        if self.observer is not None:  # the leader counts itself: a promise, as a follower's
            self.observer.acknowledged(self.name, self.term, self.log.last_index, self.term)
        for peer in self.others:
            self._send_append(peer)
        await self._advance_commit()
        return first

    async def _store(self, entries: list[Entry]) -> None:
        """Make `entries` (already in the in-memory log) durable.

        An `OSError` propagates: `server.serve` restarts the replica from disk.
        """
        await self.storage.append(entries)

    def _send_append(self, peer: str) -> None:
        next_index = self.next_index[peer]
        if next_index <= self.log.snap_index:
            self._send(peer, "snapshot", snapshot=self.snapshot)
            self.next_index[peer] = self.snapshot["index"] + 1
            return
        entries = self.log.slice(next_index, self.timing.batch)
        self._send(
            peer,
            "append",
            prev_index=next_index - 1,
            prev_term=self.log.term_at(next_index - 1),
            entries=entries,
            commit=self.commit,
        )
        self.next_index[peer] = next_index + len(entries)  # optimistic: pipelined

    async def _on_append_reply(self, message: dict[str, Any]) -> None:
        if self.role != "leader" or message["term"] != self.term:
            return
        peer = message["from"]
        if message["success"]:
            self.match_index[peer] = max(self.match_index[peer], message["match"])
            if self.observer is not None:
                self.observer.matched(self.name, self.term, peer, self.match_index[peer])
            self.next_index[peer] = max(self.next_index[peer], self.match_index[peer] + 1)
            await self._advance_commit()
            if self.next_index[peer] <= self.log.last_index:
                self._send_append(peer)
        else:
            self.next_index[peer] = max(1, min(self.next_index[peer] - 1, message["hint"]))
            self._send_append(peer)

    async def _advance_commit(self) -> None:
        for index in range(self.log.last_index, self.commit, -1):
            if self.log.term_at(index) != self.term:
                break  # only entries of the current term commit by counting (Raft 5.4.2)
            holders = 1 + sum(1 for peer in self.others if self.match_index[peer] >= index)
            if holders >= self.quorum or bugs.planted("commit_without_quorum"):
                await self._commit_to(index)
                return

    # -- replication, follower side ------------------------------------------

    async def _on_append(self, message: dict[str, Any]) -> None:
        if message["term"] < self.term:
            self._send(message["from"], "append_reply", success=False, hint=0, match=0)
            return
        await self._become_follower(message["term"], message["from"])
        self._reset_deadline()
        self.heard = asyncio.get_running_loop().time()
        prev_index, entries = message["prev_index"], message["entries"]
        if prev_index > self.log.last_index or (
            prev_index >= self.log.snap_index
            and self.log.term_at(prev_index) != message["prev_term"]
        ):
            hint = min(self.commit, self.log.last_index) + 1
            self._send(message["from"], "append_reply", success=False, hint=hint, match=0)
            return
        new = await self._merge(entries)
        if new:
            await self._store(new)
        match = prev_index + len(entries)
        if self.observer is not None:
            self.observer.acknowledged(self.name, self.term, match, self.log.term_at(match) or 0)
        self._send(message["from"], "append_reply", success=True, hint=0, match=match)
        await self._commit_to(min(message["commit"], match))
        if self.damaged and self.commit >= message["commit"]:
            log.info("%s: repaired by %s up to %d", self.name, message["from"], self.commit)
            self.damaged, self.vote_floor = False, self.term
            await self._persist_meta()  # a crash now must not bring the damage back
            reachable("kvstore: a damaged replica was repaired from its peers")

    async def _merge(self, entries: list[Entry]) -> list[Entry]:
        """Add the entries this log lacks, cutting a conflicting suffix; returns the new ones."""
        new: list[Entry] = []
        for entry in entries:
            index = entry["index"]
            if index <= self.log.snap_index:
                continue
            held = self.log.term_at(index)
            if held == entry["term"]:
                continue
            if held is not None:
                always(
                    index > self.commit,
                    "kvstore: a committed entry is never overwritten",
                    node=self.name,
                    index=index,
                    commit=self.commit,
                )
                self.log.truncate_from(index)
                # The promise of the cut entries ends here, before the disk: a crash
                # or a failed fsync inside `truncate_from` may leave them or not,
                # and either is what this newer leader's entries allow.
                if self.observer is not None:
                    self.observer.truncated(self.name, index)
                await self.storage.truncate_from(index)
            self.log.append(entry)
            new.append(entry)
        return new

    async def _on_snapshot(self, message: dict[str, Any]) -> None:
        if message["term"] < self.term:
            return
        await self._become_follower(message["term"], message["from"])
        self._reset_deadline()
        self.heard = asyncio.get_running_loop().time()
        snapshot = message["snapshot"]
        index = snapshot["index"]
        if index > self.commit:
            self.snapshot = snapshot
            self.machine = Machine.restore(snapshot["state"])
            if self.log.term_at(index) != snapshot["term"]:
                self.log = RaftLog(index, snapshot["term"])  # what followed conflicts: cut
                if self.observer is not None:
                    self.observer.truncated(self.name, index + 1)
            else:
                self.log.compact(index, snapshot["term"])
            self.commit = index
            await self.storage.save_snapshot(snapshot, list(self.log.entries))
            reachable("kvstore: a snapshot was installed from the leader")
            if self.observer is not None:
                self.observer.committed(self.name, index)
                self.observer.snapshotted(self.name, index, snapshot["term"])
        if self.observer is not None:
            self.observer.acknowledged(self.name, self.term, index, snapshot["term"])
        self._send(message["from"], "append_reply", success=True, hint=0, match=index)

    # -- refilling a hole without a leader -------------------------------------

    async def _on_refill(self, message: dict[str, Any]) -> None:
        """A holed peer asks for our entries after its last intact one, up to `end`."""
        prev = message["last_index"]
        if prev < self.log.snap_index or self.log.term_at(prev) != message["last_term"]:
            return  # our log does not match the peer's up to there: nothing it can use
        count = min(message["end"], self.log.last_index, prev + REFILL_LIMIT) - prev
        if count > 0:
            entries = self.log.slice(prev + 1, count)
            self._send(message["from"], "refill_reply", **message_end(message), entries=entries)

    async def _on_refill_reply(self, message: dict[str, Any]) -> None:
        """Refill the hole from a peer's entries, if they restore the log to `bound`.

        The peer's log matched ours at our last intact entry (it checked); where it
        also holds one of the records salvaged after the hole (same index and term),
        Raft's log matching makes its entries in between the ones we lost. Our log
        becomes the peer's entries up to that record, then the salvaged records
        after it, and is taken only if that reaches the bound entry exactly
        (anything less would leave the replica as unable to campaign as before).
        """
        if not self._holed() or message["last_index"] != self.log.last_index:
            return
        if message["last_term"] != self.log.last_term:
            return
        refilled = _refilled(message["entries"], self.salvaged, self.log.last_index, self.bound)
        if not refilled:
            return
        for entry in refilled:
            self.log.append(entry)
        await self._store(refilled)
        await self._persist_meta()  # the bound is met: a crash now must not bring it back
        reachable("kvstore: a replica refilled the hole in its log from a peer")
        log.info(
            "%s: refilled its log to %d from %s", self.name, self.log.last_index, message["from"]
        )

    # -- commit and apply -----------------------------------------------------

    async def _commit_to(self, index: int) -> None:
        if index <= self.commit:
            return
        for applied in range(self.commit + 1, index + 1):
            entry = self.log.entry(applied)
            result = self.machine.apply(applied, entry["cmd"])
            if self.observer is not None:
                self.observer.applied(self.name, applied, entry["term"], entry["cmd"], result)
            self._resolve(applied, entry["term"], result)
        self.commit = index
        if self.observer is not None:
            self.observer.committed(self.name, index)
        sometimes(self.role == "leader", "kvstore: a leader committed entries")
        if self.commit - self.log.snap_index >= self.timing.snapshot_every:
            await self._take_snapshot()

    def _resolve(self, index: int, term: int, result: Result) -> None:
        waiting = self.waiting.pop(index, None)
        if waiting is None or waiting[1].done():
            return
        if waiting[0] == term:
            waiting[1].set_result(result)
        else:
            waiting[1].set_exception(NotLeader(self.leader))

    def _fail_waiting(self) -> None:
        for _, future in self.waiting.values():
            if not future.done():
                future.set_exception(NotLeader(None))
        self.waiting.clear()

    async def _take_snapshot(self) -> None:
        term = self.log.term_at(self.commit)
        assert term is not None
        state = json.loads(json.dumps(self.machine.snapshot()))  # a copy, frozen now
        self.snapshot = {"index": self.commit, "term": term, "state": state}
        # How often the snapshots' edge cases arise (see docs/how-to/store-oracles.md):
        sometimes(self.log.last_term != term, "kvstore: a snapshot ended before a newer term")
        sometimes(self.commit == self.log.last_index, "kvstore: a snapshot covered the whole log")
        self.log.compact(self.commit, term)
        if self.observer is not None:
            self.observer.snapshotted(self.name, self.commit, term)
        await self.storage.save_snapshot(self.snapshot, list(self.log.entries))
        reachable("kvstore: a snapshot was taken and the log truncated")

    # -- sending ----------------------------------------------------------------

    def _send(self, peer: str, kind: str, **fields: Any) -> None:
        self.links[peer].send({"type": kind, "from": self.name, "term": self.term, **fields})


def message_end(message: dict[str, Any]) -> dict[str, int]:
    """The `last_index` and `last_term` a refill request named, for its reply."""
    return {"last_index": message["last_index"], "last_term": message["last_term"]}


def _refilled(
    offered: list[Entry], salvaged: list[Entry], last: int, bound: tuple[int, int]
) -> list[Entry]:
    """The entries after `last` that restore a holed log to `bound`, or [] if none do.

    `offered` are a peer's entries from `last + 1` on (its log matched ours at
    `last`). The peer's entry that matches a salvaged record (or the bound
    entry) with the highest index anchors the refill; the salvaged records
    after it must follow on, one index after another with terms never going
    down (a Raft log's shape), up to the bound entry.
    """
    known = {(entry["index"], entry["term"]) for entry in salvaged}
    known.add((bound[1], bound[0]))
    anchor = None
    for position, entry in enumerate(offered):
        if entry.get("index") != last + 1 + position:
            return []  # not the run of entries after ours that the peer owes
        if (entry["index"], entry["term"]) in known:
            anchor = position
    if anchor is None:
        return []
    refilled = list(offered[: anchor + 1])
    for entry in salvaged:
        if entry["index"] == refilled[-1]["index"] + 1 and entry["term"] >= refilled[-1]["term"]:
            refilled.append(entry)
    ending = (refilled[-1]["term"], refilled[-1]["index"])
    return refilled if ending == bound else []


_HANDLERS = {
    "vote": Replica._on_vote,
    "vote_reply": Replica._on_vote_reply,
    "prevote": Replica._on_prevote,
    "prevote_reply": Replica._on_prevote_reply,
    "append": Replica._on_append,
    "append_reply": Replica._on_append_reply,
    "snapshot": Replica._on_snapshot,
    "refill": Replica._on_refill,
    "refill_reply": Replica._on_refill_reply,
}
