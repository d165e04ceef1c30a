"""A search checks itself as a sweep does (`sweeps._recheck`): a share of its runs
run again, in the same process, after other runs, and must come out the same.

A run's fingerprint is what its result says of the run itself: status, the
failure's identity, the step count and a digest of every choice it drew (a
search has no trace hash; its choices are its draws). A difference is kept
in the search's summary and fails the search; the log (what a resumed search
folds back in) stays the same with any `--jobs`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from seedbed._harness.search._plan import Plan
from seedbed._harness.sweeps._recheck import DEFAULT_SHARE, GAP, chosen_by_number

Record = dict[str, Any]
__all__ = ["DEFAULT_SHARE", "GAP", "Rechecker", "fingerprint"]


def fingerprint(result: Record) -> Record:
    """What running the same plan again must reproduce."""
    failure = result.get("failure") or {}
    choices = json.dumps(result.get("choices"), sort_keys=True, default=str)
    return {
        "status": result.get("status"),
        "failure": failure.get("bucket") if isinstance(failure, dict) else failure,
        "steps": result.get("steps"),
        "choices": hashlib.blake2b(choices.encode(), digest_size=8).hexdigest(),
        "trace_hash": result.get("trace_hash"),
        "result_digest": result.get("result_digest"),
    }


def differences(first: Record, again: Record) -> list[str]:
    return [f"{key}: {first.get(key)!r} then {again.get(key)!r}"
            for key in first if first.get(key) != again.get(key)]  # fmt: skip


KEPT = 20  # differing rechecks kept in full; past these a long search only counts


@dataclass
class Rechecker:
    """Which runs of a search run twice, and what their second runs found.

    A long search keeps O(1) here: a count of rechecks, a count of those that
    differed and the first `KEPT` of them in full (for the summary)."""

    share: int
    checked: int = 0
    differed_count: int = 0
    differed: list[Record] = field(default_factory=list)

    def wants(self, plan: Plan) -> bool:
        """1 in `share` by the run's seed, and always the search's first run."""
        if self.share <= 0:
            return False
        return plan.index == 0 or chosen_by_number(plan.seed, self.share)

    def compare(self, plan: Plan, first: Record, again: Record) -> Record:
        """One recheck's verdict (counted; kept in `differed` when it differed)."""
        changed = differences(fingerprint(first), fingerprint(again))
        line = {"kind": "recheck", "index": plan.index, "seed": plan.seed, "plan": plan.kind,
                "same": not changed, "differences": changed}  # fmt: skip
        self.checked += 1
        if changed:
            self.differed_count += 1
            if len(self.differed) < KEPT:
                self.differed.append(line)
        return line
