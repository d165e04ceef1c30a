"""A second, independent set of realistic mutants of the example store: a held-out proxy.

Issue 25 is judged on mutants this project never sees. The ones in
`tests/quality/kvstore_mutants.py` were written next to the oracles that
kill them, so their score says little about unseen bugs; these were written
apart, from a list of where such stores go wrong (index off-by-ones in
match, commit and snapshot bounds; term comparisons; the dedup table;
checksum and recovery paths; client retries; OCC validation), and none of
them is a mutant of that file or of the issue's text. `CONTROLS` change
the code without changing what it promises (a smaller batch, another hint,
another retry order, a version counter in place of log indexes): a control
that a sweep kills is a false alarm, a bug in an oracle or in the store.

`bench/mutation.py --heldout` runs them (see its docstring for the budget).
Each uses `kvstore_mutants.Mutant` (one function's source, `old` replaced
by `new` once, in place only while a sweep runs); `scenario` is a hint for
the docs only: the sweep runs every scenario on every mutant.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "quality"))
sys.path.insert(0, str(ROOT))

from kvstore_mutants import Mutant  # noqa: E402  (a test helper, on the path just above)

RAFT, STORAGE, MACHINE = (
    "examples.kvstore.raft",
    "examples.kvstore.storage",
    "examples.kvstore.machine",
)
CLIENT, FRAMES = "examples.kvstore.client", "examples.kvstore.frames"

HELDOUT = (
    Mutant(
        "append_skips_prev_term",
        RAFT,
        "Replica._on_append",
        'and self.log.term_at(prev_index) != message["prev_term"]',
        "and False",
        "stale_leader",
        "a follower appends after any entry at prev_index, whatever its term (no log matching)",
    ),
    Mutant(
        "conflicting_entry_kept",
        RAFT,
        "Replica._merge",
        'if held == entry["term"]:',
        "if held is not None:",
        "stale_leader",
        "a follower keeps its own entry where the leader's conflicts (never truncates)",
    ),
    Mutant(
        "commit_counts_one_behind",
        RAFT,
        "Replica._advance_commit",
        "self.match_index[peer] >= index",
        "self.match_index[peer] >= index - 1",
        "crash_recovery",
        "a leader counts a follower one entry short of `index` as holding it",
    ),
    Mutant(
        "election_one_vote_short",
        RAFT,
        "Replica._count_votes",
        "len(self.votes) < self.quorum",
        "len(self.votes) < self.quorum - 1",
        "crash_recovery",
        "a candidate declares itself leader one vote short of a majority",
    ),
    Mutant(
        "vote_floor_inclusive",
        RAFT,
        "Replica._would_vote",
        "term > self.vote_floor",
        "term >= self.vote_floor",
        "disk_faults",
        "a repaired replica votes again in the term it was repaired in (it may have voted)",
    ),
    Mutant(
        "snapshot_keeps_conflicting_suffix",
        RAFT,
        "Replica._on_snapshot",
        'if self.log.term_at(index) != snapshot["term"]:',
        "if False:",
        "stale_leader",
        "an installed snapshot keeps the follower's entries after it even when they conflict",
    ),
    Mutant(
        "snapshot_boundary_off_by_one",
        RAFT,
        "Replica._send_append",
        "if next_index <= self.log.snap_index:",
        "if next_index < self.log.snap_index:",
        "stale_leader",
        "a leader sends entries, not its snapshot, to a follower just at the snapshot's end",
    ),
    Mutant(
        "snapshot_term_of_last_entry",
        RAFT,
        "Replica._take_snapshot",
        "term = self.log.term_at(self.commit)",
        "term = self.log.last_term",
        "crash_recovery",
        "a snapshot records the log's last term, not the term of the entry it ends at",
    ),
    Mutant(
        "answer_for_replaced_entry",
        RAFT,
        "Replica._resolve",
        "if waiting[0] == term:",
        "if True:",
        "partitions",
        "a waiting client is answered with whatever entry committed at its index",
    ),
    Mutant(
        "rename_without_directory_fsync",
        STORAGE,
        "Storage._replace",
        "await fs.fsync_dir(self.directory)",
        "pass",
        "crash_recovery",
        "meta and snapshot are renamed into place without fsyncing the directory",
    ),
    Mutant(
        "truncate_keeps_one_stale",
        STORAGE,
        "Storage.truncate_from",
        "keep = index - self._first",
        "keep = index - self._first + 1",
        "stale_leader",
        "cutting a conflicting suffix leaves its first entry on the disk",
    ),
    Mutant(
        "first_index_after_snapshot_off_by_one",
        STORAGE,
        "Storage.save_snapshot",
        'else snapshot["index"] + 1',
        'else snapshot["index"]',
        "crash_recovery",
        "after a snapshot that emptied the log, the file's first index is one too low",
    ),
    Mutant(
        "recovery_keeps_first_read",
        STORAGE,
        "Storage._read_settled",
        "if seen[data] >= SAME_READS:",
        "if True:",
        "disk_faults",
        "recovery takes a file's first damaged read for damage at rest (a flip on the way back)",
    ),
    Mutant(
        "middle_damage_taken_for_torn_tail",
        FRAMES,
        "decode_records",
        "return messages, offset, end + length == len(data)",
        "return messages, offset, True",
        "disk_faults",
        "a record failing its checksum in the middle of the log is dropped as a torn tail",
    ),
    Mutant(
        "only_first_read_validated",
        MACHINE,
        "Machine._transaction",
        'for key, version in command["reads"]:',
        'for key, version in command["reads"][:1]:',
        "contention",
        "a transaction's commit validates only its first read",
    ),
    Mutant(
        "stale_request_answered_with_later_result",
        MACHINE,
        "Machine.apply",
        'last[1] if last[0] == seq else {"error": "stale request"}',
        "last[1]",
        "client_crash",
        "a request older than its session's last is answered with the last one's result",
    ),
    Mutant(
        "restore_forgets_sessions",
        MACHINE,
        "Machine.restore",
        'machine.sessions = {key: list(value) for key, value in state["sessions"].items()}',
        "pass",
        "crash_recovery",
        "a replica restored from a snapshot forgets which requests it already applied",
    ),
    Mutant(
        "retry_with_new_seq",
        CLIENT,
        "Client.request",
        "self._switch(None)\n",
        "self._switch(None)\n"
        "            self._seq += 1\n"
        '            command = {**command, "seq": self._seq}\n',
        "crash_recovery",
        "a client retries a timed-out request under a new sequence number",
    ),
    Mutant(
        "session_kept_after_unknown",
        CLIENT,
        "Client.new_session",
        "self.name = f\"{self.name.split('~')[0]}~{random.getrandbits(32):08x}\"",
        "pass",
        "partitions",
        "after an unknown outcome the client keeps its session and restarts its numbering",
    ),
)

CONTROLS = (
    Mutant(
        "control_half_batches",
        RAFT,
        "Replica._send_append",
        "entries = self.log.slice(next_index, self.timing.batch)",
        "entries = self.log.slice(next_index, max(1, self.timing.batch // 2))",
        "",
        "harmless: a leader sends half as many entries per append",
    ),
    Mutant(
        "control_retry_order_reversed",
        CLIENT,
        "Client._switch",
        "(names.index(self._target) + 1) % len(names)",
        "(names.index(self._target) - 1) % len(names)",
        "",
        "harmless: a client without a hint tries the replicas in the other order",
    ),
    Mutant(
        "control_version_counter",
        MACHINE,
        "Machine._write",
        "self.versions[key] = index",
        "self.versions[key] = self.versions.get(key, 0) + 1",
        "",
        "harmless: a key's version counts its writes (still unique per key) instead of "
        "naming the log index of the last",
    ),
)
BY_NAME = {mutant.name: mutant for mutant in HELDOUT + CONTROLS}


def sweep(
    mutant: Mutant | None, swarm: int, named: int, only: tuple[str, ...] = ()
) -> dict[str, object]:
    """Run the budget on the store with `mutant` in place (None: the store as it is).

    Swarm gets `swarm` seeds and every other named scenario `named`, taken
    seed by seed across scenarios (seed 0 of each, then seed 1...), so a
    mutant any scenario finds early is killed early; the first failing run
    (an oracle, a liveness claim, or an exception) kills it. With `only`, just
    those scenarios (runs are functions of their seed: a scenario added since
    a measurement is all that must run to bring it up to date).
    """
    import time
    from contextlib import nullcontext

    from examples.kvstore import scenarios
    from kvstore_mutants import applied

    budget = {scenario.name: swarm if scenario.name == "swarm" else named
              for scenario in scenarios.SCENARIOS
              if not only or scenario.name in only}  # fmt: skip
    started, runs = time.process_time(), 0
    with applied(mutant) if mutant is not None else nullcontext():
        for seed in range(max(budget.values())):
            for scenario in scenarios.SCENARIOS:
                if seed >= budget.get(scenario.name, 0):
                    continue
                runs += 1
                _, error = scenario.execute(seed)
                if error is not None:
                    return {
                        "killed_by": f"{scenario.name} seed {seed}",
                        "why": str(error).splitlines()[0][:160],
                        "runs": runs,
                        "cpu": round(time.process_time() - started, 1),
                    }
    return {"killed_by": None, "runs": runs, "cpu": round(time.process_time() - started, 1)}


def main() -> None:
    """`python bench/mutants_heldout.py NAME SWARM NAMED [SCENARIO,...]`: one sweep, as JSON."""
    import json
    import logging

    logging.disable(logging.CRITICAL)  # the store's warnings under faults: noise here
    name, swarm, named = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    only = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 and sys.argv[4] else ()
    from mutants_round3 import BY_NAME as ROUND_THREE_BY_NAME

    mutant = None if name == "none" else {**BY_NAME, **ROUND_THREE_BY_NAME}[name]
    print(json.dumps({"name": name, **sweep(mutant, swarm, named, only)}), flush=True)


if __name__ == "__main__":
    main()
