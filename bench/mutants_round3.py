"""Round three (issue 45): mutants of the seven kinds that survived a default sweep.

The issue names seven kinds of held-out mutant that a default sweep let
through (a leader committing an older term's entry by counting, a follower
committing past what it matched, a follower acknowledging its last index, a
replica that lost its vote file and still votes, OCC not validating reads of
keys never written, deduplication re-executing an older retried request, a
client keeping its id across sessions after an unknown outcome). These are
variants of each kind, more than one per kind where the store has more than
one place to get it wrong, written to measure the scenarios and oracles
against the kind rather than against one patch. `bench/mutation.py --heldout
--set round3` sweeps them as it sweeps the held-out set.
"""

from __future__ import annotations

# The held-out set's module puts the store and the mutant helper on the path.
from mutants_heldout import CLIENT, MACHINE, RAFT, STORAGE, Mutant

WORKLOAD = "examples.kvstore.workload"

ROUND_THREE = (
    # A leader commits an entry of an earlier term by counting replicas (Figure 8).
    Mutant(
        "older_term_counted_none",
        RAFT,
        "Replica._advance_commit",
        "if self.log.term_at(index) != self.term:",
        "if self.log.term_at(index) is None:",
        "",
        "a leader counts replicas for entries of any term (Raft's Figure 8)",
    ),
    Mutant(
        "older_term_counted_newer_only",
        RAFT,
        "Replica._advance_commit",
        "if self.log.term_at(index) != self.term:",
        "if (self.log.term_at(index) or 0) > self.term:",
        "",
        "a leader stops counting only at entries of a newer term than its own",
    ),
    # A follower advances its commit index past what the append matched.
    Mutant(
        "follower_commit_to_last_index",
        RAFT,
        "Replica._on_append",
        'await self._commit_to(min(message["commit"], match))',
        'await self._commit_to(min(message["commit"], self.log.last_index))',
        "",
        "a follower commits up to the leader's commit index within its whole log",
    ),
    Mutant(
        "follower_commit_past_prev",
        RAFT,
        "Replica._on_append",
        'await self._commit_to(min(message["commit"], match))',
        'await self._commit_to(min(message["commit"], max(match, self.log.last_index)))',
        "",
        "a follower takes whatever its log holds up to the leader's commit as matched",
    ),
    # A follower acknowledges its last log index instead of what the append matched.
    Mutant(
        "follower_acks_last_index",
        RAFT,
        "Replica._on_append",
        "match = prev_index + len(entries)",
        "match = self.log.last_index",
        "",
        "a follower reports its last index as matched, stale tail included",
    ),
    Mutant(
        "follower_reply_names_last_index",
        RAFT,
        "Replica._on_append",
        "success=True, hint=0, match=match)",
        "success=True, hint=0, match=self.log.last_index)",
        "",
        "a follower's reply names its last index while it commits only what matched",
    ),
    # A replica that lost its vote file still votes.
    Mutant(
        "unreadable_meta_not_damage",
        STORAGE,
        "Storage._read_single",
        "recovered.damaged = True",
        "pass",
        "",
        "an unreadable meta file (term and vote) is recovered as a fresh replica's",
    ),
    Mutant(
        "damaged_replica_votes",
        RAFT,
        "Replica._would_vote",
        "not self.damaged\n        and term > self.vote_floor",
        "term > self.vote_floor",
        "",
        "a replica recovered as damaged (its vote unknown) grants votes",
    ),
    Mutant(
        "damage_forgotten_at_start",
        RAFT,
        "Replica._resume",
        "self.damaged, self.vote_floor = recovered.damaged, recovered.vote_floor",
        "self.vote_floor = recovered.vote_floor",
        "",
        "a replica starts undamaged whatever its disk lost",
    ),
    Mutant(
        "missing_meta_taken_for_fresh",
        STORAGE,
        "Storage.load",
        'if meta is None and not recovered.damaged and await fs.exists(self._path("log")):',
        "if False:",
        "",
        "a replica whose meta file is gone beside its log starts as a fresh one",
    ),
    # OCC that does not validate reads of never-written keys.
    Mutant(
        "absent_reads_skipped_at_commit",
        MACHINE,
        "Machine._transaction",
        'for key, version in command["reads"]:',
        'for key, version in [read for read in command["reads"] if read[1]]:',
        "",
        "a commit validates only reads of keys that had been written",
    ),
    Mutant(
        "absent_reads_not_sent",
        CLIENT,
        "Transaction.commit",
        '"reads": [[key, version] for key, version, _ in self.reads],',
        '"reads": [[key, version] for key, version, _ in self.reads if version],',
        "",
        "a client leaves reads of keys never written out of its commit",
    ),
    # Deduplication that re-executes an older retried request.
    Mutant(
        "older_retry_executed",
        MACHINE,
        "Machine.apply",
        "if last is not None and last[0] >= seq:",
        "if last is not None and last[0] == seq:",
        "",
        "only a session's last request is deduplicated; an older retry runs again",
    ),
    # A client that keeps its id across sessions after an unknown outcome.
    Mutant(
        "session_suffix_reused",
        CLIENT,
        "Client.new_session",
        "random.getrandbits(32):08x",
        "0:08x",
        "",
        "every session after the first takes the same id, numbering from 1 again",
    ),
    Mutant(
        "session_name_kept_numbering_restarts",
        CLIENT,
        "Client.new_session",
        "self.name = f\"{self.name.split('~')[0]}~{random.getrandbits(32):08x}\"",
        "pass",
        "",
        "after an unknown outcome the client keeps its id and numbers from 1 again",
    ),
)
BY_NAME = {mutant.name: mutant for mutant in ROUND_THREE}
