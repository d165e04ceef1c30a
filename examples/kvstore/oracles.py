"""The oracles that watch a simulated kvstore group: Raft's safety claims, and promises kept.

Every replica reports to one `Oracle` through the `raft.Observer` calls, and
every client through `client_ok`. Each check is a `seedbed.always`, so a
violation fails the run at the instant it happens, with the seed and the
replay command. Each is cheap (a few dictionary operations per report; the
costliest, at a restart, walks what that replica acknowledged since its last
snapshot) so that all of them run in every scenario (see
docs/how-to/store-oracles.md for what each one caught and what it costs).

Raft's claims about one instant:

- at most one leader per term; a leader of term T holds the votes of a
  majority for T (a vote is recorded when its reply is sent, which is when
  it is promised);
- a replica votes for one candidate per term, across its incarnations (and
  a restarted one still knows the vote it gave in its current term);
- a replica's commit index never goes backwards within an incarnation;
- every replica applies the same command at the same index, and its state
  machine gives the same result there (a deterministic machine fed one log:
  a difference is state that diverged, a dedup table lost on a restore);
- a leader's match index for a follower never exceeds what the follower's
  log holds (the same entry, in the same term);
- a leader commits an entry of its own term, held by a majority's logs
  (older entries commit only beneath it: Raft's Figure 8);
- a snapshot (taken, installed, or recovered at a restart) records the term
  of the entry committed at its index: the term log matching compares there;
- a replica's log never holds an entry of an older term after one of a newer
  term (its snapshot's term included): leaders append in their own term, so
  a log that does kept entries from before a conflict it should have cut
  (checked at each snapshot and each start);
- each time a replica says its log is durable (an acknowledgement), its
  storage's account of the log file (the indexes it holds, from which it
  finds the bytes to cut at a truncation) is the replica's log: an account
  one entry off cuts the wrong bytes later, unseen until a restart.

Promises that must outlive a crash:

- what a replica acknowledged (an appended entry, an installed snapshot, its
  term) is still there when it restarts, unless a newer leader truncated the
  entry, or the store itself reports the loss (it recovers as damaged, or
  with a hole below its vote bound that may hold the entry) after its disk
  damaged data at rest or on the way back. Both are needed: damage the store
  did not report is the loss this check exists to catch, and a report with
  no damage behind it is the store hiding its own bug;
- every client operation a replica answered ok was applied, at the index
  its reply names, as that client's request (not a stale one's answer, nor
  the answer to an earlier request that carried the same id).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seedbed import always

if TYPE_CHECKING:
    from examples.kvstore.raft import Replica

SAME_ENTRY = "kvstore: every replica applies the same entry at an index"
ONE_VOTE = "kvstore: a replica votes for one candidate per term"
KEPT = "kvstore: what a replica acknowledged survives its restart"
MAJORITY_VOTES = "kvstore: a leader of term T holds votes from a majority for T"
MATCHED = "kvstore: a leader's match index never exceeds what the follower's log holds"
COMMIT_QUORUM = "kvstore: a leader commits an entry of its term that a majority's logs hold"
SAME_RESULT = "kvstore: every replica's state machine gives the same result at an index"
CLIENT_OK = "kvstore: every operation acknowledged ok was applied as that request"
SNAPSHOT_TERM = "kvstore: a snapshot's term is that of the committed entry it ends at"
LOG_ACCOUNT = "kvstore: a replica's log file holds its log's indexes, by the store's account"
TERMS_ORDERED = "kvstore: a replica's log never holds an older term after a newer one"
PRUNE_AT = 128  # acknowledged points kept per replica before those under its snapshot go


def _lost_at(replica: Replica, index: int) -> bool:
    """Did `replica` recover with a hole (damage it reported) that may hold `index`? Its
    acknowledgements up to its bound, given before, may be gone; a leader's match index
    for it is then stale until the hole is refilled."""
    log = replica.log
    return (log.last_term, log.last_index) < replica.bound and index <= replica.bound[1]


def _reported(replica: Replica, index: int) -> bool:
    """Did `replica` report damage that may have taken its entry at `index`?"""
    return replica.damaged or _lost_at(replica, index)


def _no_damage(name: str) -> int:
    return 0


class Oracle:
    """Watches every replica through the `raft.Observer` calls, and the clients' answers.

    `disk_damage(name)` counts the damage node `name`'s disk did to data at
    rest or on its way back (corrupt reads, misdirected writes). A replica's
    loss is excused only by damage the store itself reported (`_reported`)
    with such damage behind the report (`_excused`): a store that drops
    acknowledged entries without knowing it (a transient bad read taken for
    a torn tail) must fail here however damaged its disk was, and so must
    one that calls its own lost writes damage on an intact disk.
    """

    def __init__(self, disk_damage: Callable[[str], int] = _no_damage) -> None:
        self.disk_damage = disk_damage
        self.leaders: dict[int, str] = {}
        self.votes: dict[tuple[str, int], str] = {}
        self.commits: dict[str, int] = {}
        self.entries: dict[int, tuple[int, dict[str, Any]]] = {}
        self.results: dict[int, Any] = {}  # the first replica's result of each index
        self.max_commit = 0
        self.replicas: dict[str, Replica] = {}  # the live incarnation of each
        # What each replica promised: its term, and (index, term) points of its
        # log it acknowledged (Raft's log matching: the entries before a point
        # are the acknowledger's too, so one point stands for them all).
        self.promised_term: dict[str, int] = {}
        self.acked: dict[str, list[tuple[int, int]]] = {}
        self.damage_seen: dict[str, int] = {}
        # Whether each replica's report of damage (damaged, or a vote bound) has
        # disk damage behind it: since the start it first showed, or carried over.
        self.justified: dict[str, bool] = {}
        self.restarts_checked = 0  # restarts held to their promises (for tests)
        self.reported: set[str] = set()  # hot checks already reported as held (`_passed`)
        # Called with (name, term) when a replica becomes leader, after the checks:
        # a scenario's hook to crash new leaders at chosen moments.
        self.on_leader: list[Callable[[str, int], None]] = []
        # Called with (name, index) when a replica takes a snapshot, after the checks:
        # a scenario's hook to cut off a follower just short of a leader's snapshot.
        self.on_snapshot: list[Callable[[str, int], None]] = []
        # Called with (name, term) when a replica grants a vote, after the checks:
        # a scenario's hook to crash voters between their vote and its reply.
        self.on_vote: list[Callable[[str, int], None]] = []

    def _excused(self, replica: Replica, index: int) -> bool:
        """May `replica` have lost its entry at `index` (its promise excused)? Only if it
        reported the damage and its disk did damage data since the report began."""
        return self.justified.get(replica.name, False) and _reported(replica, index)

    def _passed(self, claim: str) -> None:
        """Tell seedbed a hot check held, once per run: its catalog then knows the check
        ran (and a run that never reaches it shows), without `always`'s bookkeeping on
        every reply and commit (about half these oracles' cost)."""
        if claim not in self.reported:
            self.reported.add(claim)
            always(True, claim)

    # -- life cycle ---------------------------------------------------------

    def started(self, replica: Replica) -> None:
        name = replica.name
        damage = self.disk_damage(name)
        moved = damage != self.damage_seen.get(name, 0)
        reports = replica.damaged or replica.bound > (0, 0)
        self.justified[name] = reports and (moved or self.justified.get(name, False))
        self.damage_seen[name] = damage
        restarted = name in self.replicas
        self.replicas[name] = replica  # the checks below look at this incarnation
        self._account(replica)
        if restarted:
            if replica.damaged and self.justified[name]:
                self._forgive(replica)
            else:
                self._kept(replica)
        self.commits[name] = 0
        self._terms_ordered(replica)

    def _kept(self, replica: Replica) -> None:
        """A restarted replica holds its promised term and every entry it acknowledged
        (but those in a hole it reported: below its bound, beyond its log's end)."""
        name, log = replica.name, replica.log
        self.restarts_checked += 1
        promised = self.promised_term.get(name, 0)
        always(replica.term >= promised, KEPT, node=name, promised_term=promised, now=replica.term)
        vote = self.votes.get((name, replica.term))
        # One claim with `voted`'s: a replica that forgot its vote may give another
        # (unless, repaired after damage, it votes only in later terms anyway).
        always(
            vote is None or replica.vote == vote or replica.vote_floor >= replica.term,
            ONE_VOTE,
            node=name,
            term=replica.term,
            voted=vote,
            restarted_with=replica.vote,
        )
        points = self.acked.get(name, [])
        for index, term in points:
            if (
                index > log.snap_index
                and log.term_at(index) != term
                and not self._excused(replica, index)
            ):
                always(
                    False,
                    KEPT,
                    node=name,
                    acknowledged=f"index {index} of term {term}",
                    now=f"term {log.term_at(index)} (log {log.snap_index + 1}..{log.last_index})",
                )
        always(True, KEPT)
        if log.snap_index:  # the snapshot it recovered: its term as committed (see `snapshotted`)
            self.snapshotted(name, log.snap_index, log.snap_term)
        self._forgive(replica)  # what it still holds: a reported hole's points are gone

    def _forgive(self, replica: Replica) -> None:
        """A restart excused by damage: its promises start again from what it holds, so a
        later restart is held to what it promised since, not to what the damage took."""
        log = replica.log
        self.promised_term[replica.name] = replica.term
        self.acked[replica.name] = [
            (index, term)
            for index, term in self.acked.get(replica.name, [])
            if index > log.snap_index and log.term_at(index) == term
        ]

    def acknowledged(self, name: str, term: int, index: int, entry_term: int) -> None:
        """Replica `name`, in `term`, promised it durably holds entry `index` of `entry_term`."""
        self._account(self.replicas[name])
        if term > self.promised_term.get(name, 0):
            self.promised_term[name] = term
        points = self.acked.setdefault(name, [])
        if index and (not points or points[-1] != (index, entry_term)):
            points.append((index, entry_term))
            if len(points) > PRUNE_AT:  # a snapshot holds the older ones: kept for good
                snap_index = self.replicas[name].log.snap_index
                self.acked[name] = [point for point in points if point[0] > snap_index]

    def _account(self, replica: Replica) -> None:
        """The storage's account of the log file is the replica's log (at a moment the
        replica says the file is durable): the same first and last index."""
        log = replica.log
        held = replica.storage.span()
        if held == (log.snap_index + 1, log.last_index):
            self._passed(LOG_ACCOUNT)  # per acknowledgement: details only on failure
            return
        always(
            False,
            LOG_ACCOUNT,
            node=replica.name,
            log=f"{log.snap_index + 1}..{log.last_index}",
            file=f"{held[0]}..{held[1]}",
        )

    def _terms_ordered(self, replica: Replica) -> None:
        """No entry of `replica`'s log is of an older term than the one before it (or than
        its snapshot's, for the first): what a start recovered, or a snapshot left."""
        log = replica.log
        previous = log.snap_term
        for position, entry in enumerate(log.entries):
            if entry["term"] < previous:
                always(
                    False,
                    TERMS_ORDERED,
                    node=replica.name,
                    index=log.snap_index + 1 + position,
                    term=entry["term"],
                    after_term=previous,
                )
                return
            previous = entry["term"]
        self._passed(TERMS_ORDERED)

    def truncated(self, name: str, index: int) -> None:
        """Replica `name` cut its log from `index` on: a newer leader's entries replace them.

        Reported as the replica decides the cut (its log already cut, the disk not
        yet). A point cut away also stood for the entries below the cut (log
        matching), which the replica still owes: its entry just below the cut
        stands for them."""
        points = self.acked.get(name)
        if points:
            kept = [point for point in points if point[0] < index]
            log = self.replicas[name].log
            below = log.term_at(index - 1) if index - 1 > log.snap_index else None
            if len(kept) < len(points) and below is not None and (index - 1, below) not in kept:
                kept.append((index - 1, below))
            self.acked[name] = kept

    # -- elections ----------------------------------------------------------

    def voted(self, name: str, term: int, candidate: str) -> None:
        first = self.votes.setdefault((name, term), candidate)
        always(
            first == candidate,
            ONE_VOTE,
            node=name,
            term=term,
            first=first,
            second=candidate,
        )
        if term > self.promised_term.get(name, 0):
            self.promised_term[name] = term
        for hook in self.on_vote:
            hook(name, term)

    def leader(self, name: str, term: int) -> None:
        elected = self.leaders.setdefault(term, name)
        always(
            elected == name,
            "kvstore: at most one leader per term",
            term=term,
            first=elected,
            second=name,
        )
        replica = self.replicas[name]
        voters = [
            voter
            for voter in (replica.name, *replica.others)
            if self.votes.get((voter, term)) == name
        ]
        always(
            len(voters) >= replica.quorum,
            MAJORITY_VOTES,
            node=name,
            term=term,
            voters=",".join(voters),
            quorum=replica.quorum,
        )
        for hook in self.on_leader:
            hook(name, term)

    # -- replication ----------------------------------------------------------

    def matched(self, name: str, term: int, peer: str, match: int) -> None:
        """Leader `name` of `term` now counts `peer` as holding its log up to `match`."""
        follower = self.replicas.get(peer)
        if follower is None or follower.term != term or match <= follower.log.snap_index:
            return  # a newer term may have cut the follower's log; a snapshot holds the rest
        leader_log, held = self.replicas[name].log, follower.log.term_at(match)
        if match < leader_log.snap_index:
            return  # compacted: committed, and a follower holding it is checked as it applies
        if held is not None and held == leader_log.term_at(match):
            self._passed(MATCHED)  # details rendered only on failure: this runs per reply
            return
        if self._excused(follower, match):
            return
        always(
            False,
            MATCHED,
            leader=name,
            follower=peer,
            match=match,
            follower_log=f"{follower.log.snap_index + 1}..{follower.log.last_index}",
            follower_term_at_match=held,
            leader_term_at_match=leader_log.term_at(match),
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
        replica = self.replicas.get(name)
        if replica is not None and replica.role == "leader":
            self._leader_committed(replica, index)

    def _leader_committed(self, leader: Replica, index: int) -> None:
        term = leader.log.term_at(index)
        holders = 0
        for peer in (leader.name, *leader.others):
            other = self.replicas.get(peer)
            if other is None:
                continue
            if (
                index <= other.log.snap_index
                or other.log.term_at(index) == term
                or self._excused(other, index)
            ):
                holders += 1
        if term == leader.term and holders >= leader.quorum:
            self._passed(COMMIT_QUORUM)
            return
        always(
            False,
            COMMIT_QUORUM,
            node=leader.name,
            term=leader.term,
            index=index,
            entry_term=term,
            holders=holders,
            quorum=leader.quorum,
        )

    def snapshotted(self, name: str, index: int, term: int) -> None:
        """Replica `name` holds a snapshot ending at `index` in `term` (taken or installed).

        The term is what Raft's log matching compares at the snapshot's end (a
        follower's prev_term check, a voter's last_term once the log is empty), so
        it must be the term of the entry committed there, not of any other. The entries
        the replica's log keeps after it must be of that term or later."""
        replica = self.replicas.get(name)
        if replica is not None:
            kept = replica.log.entries
            if kept and kept[0]["term"] < replica.log.snap_term:
                self._terms_ordered(replica)  # fails, naming where
        first = self.entries.get(index)
        if first is None or first[0] == term:
            self._passed(SNAPSHOT_TERM)
        else:
            always(False, SNAPSHOT_TERM, node=name, index=index, term=term, committed_term=first[0])
        for hook in self.on_snapshot:
            hook(name, index)

    def applied(
        self, name: str, index: int, term: int, command: dict[str, Any], result: Any
    ) -> None:
        # Compared as values (commands are never changed once logged); rendered
        # only when they differ, since this runs for every entry on every replica.
        first = self.entries.setdefault(index, (term, command))
        if first == (term, command):
            always(True, SAME_ENTRY)
            self._same_result(name, index, result)
            return
        always(
            False,
            SAME_ENTRY,
            node=name,
            index=index,
            first=f"term {first[0]}: {json.dumps(first[1], sort_keys=True)[:80]}",
            now=f"term {term}: {json.dumps(command, sort_keys=True)[:80]}",
        )

    def _same_result(self, name: str, index: int, result: Any) -> None:
        """The state machine is deterministic: the same log gives every replica the same
        result at each index (a dedup table, a version or a value that differs shows
        state that diverged: lost on a restore, say)."""
        first = self.results.setdefault(index, result)
        if first == result:
            self._passed(SAME_RESULT)
            return
        always(
            False,
            SAME_RESULT,
            node=name,
            index=index,
            first=json.dumps(first, sort_keys=True)[:120],
            now=json.dumps(result, sort_keys=True)[:120],
        )

    # -- clients ----------------------------------------------------------------

    def client_ok(self, command: dict[str, Any], result: Any) -> None:
        """A replica answered `command` ok with `result`: it was applied, as this request.

        The whole command is compared, not only its id (client and sequence
        number): a client that reuses an id (a restarted session numbering from
        1 again under its old name) is answered with its predecessor's result
        for another request, which the id alone cannot tell apart."""
        index = result.get("index") if isinstance(result, dict) else None
        entry = self.entries.get(index) if isinstance(index, int) else None
        cmd = entry[1] if entry is not None else {}
        if cmd == command:
            self._passed(CLIENT_OK)
            return
        always(
            False,
            CLIENT_OK,
            request=f"{command['client']}#{command['seq']} {command['op']}",
            result=json.dumps(result, sort_keys=True)[:120],
            applied_at_index=f"{cmd.get('client')}#{cmd.get('seq')}" if entry else None,
        )
