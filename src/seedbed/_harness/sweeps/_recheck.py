"""Every sweep checks itself: a share of its seeds run again, later, in the same worker.

FoundationDB reruns a share of its simulations with the same seed and fails
on any difference (its "unseed" check). A sweep does the same by default: one
seed in `share` (20), chosen by the seed's own number so a resumed sweep
chooses alike, at least one per sweep, is run a second time by the worker
that ran it, after it has run `GAP` other seeds (or when none are left). A
library whose module state survives from one seed to the next, or C code
drawing its own entropy, then shows as a different trace hash, result or
failure, and the sweep fails: the seed's record becomes a `Nondeterminism`
failure naming the first differing event and the replay command.

The cost is one run in `share`, plus, only when a recheck differs, two traced
runs to find where (`_locate`). `--recheck 0` turns it off.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from seedbed._harness.sweeps._locate import in_worker
from seedbed._harness.sweeps._record import lost

Record = dict[str, Any]
DEFAULT_SHARE = 20  # one seed in 20 runs twice
GAP = 3  # other seeds a worker runs between a seed and its recheck, when it has them
COMPARED = ("status", "trace_hash", "result_digest", "bucket", "steps", "virtual_time")
RECHECKED = ("pass", "fail")  # crashes and timeouts have no run to compare


def chosen_by_number(seed: int, share: int) -> bool:
    """Whether `seed` is one of the 1 in `share` seeds rechecked (by its digest)."""
    digest = hashlib.blake2b(seed.to_bytes(8, "little"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % share == 0


def chosen_seeds(seeds: range, share: int) -> frozenset[int]:
    """The seeds of `seeds` a sweep runs twice: 1 in `share` by their number,
    at least one (the first by that same digest order) unless `share` is 0."""
    if share <= 0 or not seeds:
        return frozenset()
    chosen = frozenset(seed for seed in seeds if chosen_by_number(seed, share))
    return chosen or frozenset((seeds[0],))


def fingerprint(record: Record) -> Record:
    """What a second run of the seed must reproduce."""
    return {key: record.get(key) for key in COMPARED}


def differences(first: Record, again: Record) -> list[str]:
    """'trace_hash: 1a2b... then 3c4d...' for each field the second run changed."""
    return [
        f"{key}: {first.get(key)!r} then {again.get(key)!r}"
        for key in COMPARED
        if first.get(key) != again.get(key)
    ]


def request(record: Record, folder: str) -> Record:
    """The follow-up request that reruns a finished seed (see the worker)."""
    seed = int(record["seed"])
    return {"seed": seed, "recheck": fingerprint(record),
            "trace": f"{folder}/seed-{seed}-worker.jsonl"}  # fmt: skip


def failed_record(record: Record, answer: Record, where: str) -> Record:
    """The seed's record once its recheck differed: a `Nondeterminism` failure."""
    seed = int(record["seed"])
    changed = "; ".join(answer.get("differences") or [])
    message = (
        f"seed {seed} ran differently when run again in the same worker after other "
        f"seeds ({changed})"
    )
    failed = lost(seed, str(record.get("replay", "")), "fail", message, 0.0)
    failed.update({
        "error_type": "Nondeterminism",
        "bucket": "Nondeterminism: a seed ran differently when its worker ran it again",
        "trace_hash": record.get("trace_hash"), "steps": record.get("steps"),
        "virtual_time": record.get("virtual_time"), "wall_time": record.get("wall_time", 0.0),
        "traceback": f"{message}\n  {where}\n  replay: {record.get('replay')}",
        "first_difference": where, "first_status": record.get("status"),
        "recheck_differences": list(answer.get("differences") or []),
    })  # fmt: skip
    return failed


class Rechecks:
    """One sweep's rechecks: which seeds, their follow-up requests, their verdicts."""

    def __init__(
        self, settings: Record, seeds: range, share: int, folder: Path, seed_timeout: float
    ) -> None:
        self.settings = settings
        self.chosen = chosen_seeds(seeds, share)
        self.share = share
        self.folder = folder
        self.seed_timeout = seed_timeout
        self.gap = GAP
        self.first: dict[int, Record] = {}  # chosen seeds' records, until rechecked

    def ran(self, record: Record) -> None:
        """A seed's record was written: keep it if its recheck is to come."""
        if int(record["seed"]) in self.chosen and record.get("status") in RECHECKED:
            self.first[int(record["seed"])] = record

    def follow_up(self, record: Record) -> Record | None:
        """The pool's hook: the recheck request for a chosen seed's first answer."""
        seed = record.get("seed")
        if record.get("kind") != "seed" or seed not in self.chosen:
            return None
        if record.get("status") not in RECHECKED:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        return request(record, str(self.folder))

    def lost_rerun(self, record: Record) -> Record:
        """A rerun whose worker crashed or timed out, as a recheck's answer: it
        did not come out as the first run did."""
        first = self.first.get(int(record["seed"]), {}).get("status")
        changed = f"status: {first!r} then {record['status']!r} ({record['message']})"
        return {"kind": "recheck", "seed": record["seed"], "trace": None,
                "differences": [changed], "wall_time": record.get("wall_time")}  # fmt: skip

    def answered(self, answer: Record) -> list[Record]:
        """The lines a recheck's answer adds to the results file: the recheck, and
        when it differed, the seed's record again as a `Nondeterminism` failure."""
        seed = int(answer["seed"])
        changed = list(answer.get("differences") or [])
        line = {"kind": "recheck", "seed": seed, "same": not changed, "differences": changed,
                "wall_time": answer.get("wall_time")}  # fmt: skip
        first = self.first.pop(seed, None)
        if not changed or first is None:
            return [line]
        where = in_worker(self.settings, seed, self.folder, self.seed_timeout,
                          answer.get("trace"))  # fmt: skip
        return [line, failed_record(first, answer, where)]
