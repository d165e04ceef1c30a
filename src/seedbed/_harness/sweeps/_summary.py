"""What a sweep found, from its records: totals, failure buckets, faults, assertions.

Failures are grouped into buckets by kind and message with numbers masked
(the record's `bucket`), so a thousand seeds failing one assertion read as one
line with a count, its smallest failing seed and the command that replays it.
Scenario records add fault effectiveness (in how many seeds each fault was
injected, and in how many it actually changed something) and the assertion
catalog, where a `sometimes` that was never true means the test never reached
the situation it was written for. The catalog counts, per claim, the seeds
where it was true and those where it broke (an `always` or invariant false
once, an `unreachable` reached), and lists every `sometimes` the target's
code declares (`_declared`), reached or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from seedbed._harness.sweeps._record import FAILED, record_identity, relative_location

Record = dict[str, Any]
_HOPEFUL = ("sometimes", "reachable")  # kinds that must be true at least once
_KEPT = ("always", "invariant")  # kinds that break when false once


@dataclass
class Bucket:
    """Failures that look alike, and the simplest one to start from."""

    name: str
    status: str
    count: int
    smallest_seed: int
    replay: str
    location: str | None
    message: str | None
    traceback: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "bucket": self.name, "status": self.status, "count": self.count,
            "smallest_seed": self.smallest_seed, "replay": self.replay,
            "location": self.location, "message": self.message,
        }  # fmt: skip


@dataclass
class Summary:
    """Totals over the seeds of one sweep."""

    seeds: int = 0
    passed: int = 0
    failing_seeds: list[int] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    buckets: list[Bucket] = field(default_factory=list)
    faults: dict[str, dict[str, int]] = field(default_factory=dict)
    assertions: dict[str, dict[str, Any]] = field(default_factory=dict)
    rechecked: int = 0  # seeds run a second time in their worker (see `_recheck`)
    recheck_differed: list[int] = field(default_factory=list)
    # Per seed whose recheck differed: where its runs part and why (`_locate`).
    recheck_found: dict[int, str] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return len(self.failing_seeds)

    @property
    def never_true(self) -> list[str]:
        """The `sometimes`/`reachable` assertions no seed ever made true."""
        return [
            message
            for message, entry in self.assertions.items()
            if entry["kind"] in _HOPEFUL and entry["true"] == 0
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "seeds": self.seeds,
            "passed": self.passed,
            "failed": self.failed,
            "crashed": self.statuses.get("crash", 0),
            "timed_out": self.statuses.get("timeout", 0),
            "failing_seeds": self.failing_seeds,
            "buckets": [bucket.as_json() for bucket in self.buckets],
            "faults": self.faults,
            "assertions": self.assertions,
            "never_true": self.never_true,
            "rechecked": self.rechecked,
            "recheck_differed": self.recheck_differed,
        }


def summarize(
    records: Iterable[Record],
    declared: dict[str, dict[str, str]] | None = None,
    rechecks: Iterable[Record] = (),
) -> Summary:
    """Fold seed records (in any order) into totals, buckets and catalogs;
    `declared` claims (message -> kind, location) no seed evaluated are listed
    too, and the rechecks' records are folded into their count and the seeds
    that differed."""
    summary = Summary()
    for recheck in sorted(rechecks, key=lambda r: int(r["seed"])):
        summary.rechecked += 1
        if recheck.get("same") is not True:
            summary.recheck_differed.append(int(recheck["seed"]))
    buckets: dict[str, Bucket] = {}
    for record in sorted(records, key=lambda r: int(r["seed"])):
        summary.seeds += 1
        status = str(record["status"])
        summary.statuses[status] = summary.statuses.get(status, 0) + 1
        if isinstance(record.get("first_difference"), str):
            changed = record.get("recheck_differences")
            said = "; ".join(map(str, changed)) + "\n" if isinstance(changed, list) else ""
            summary.recheck_found[int(record["seed"])] = said + record["first_difference"]
        if status in FAILED:
            summary.failing_seeds.append(int(record["seed"]))
            _add_to_bucket(buckets, record)
        else:
            summary.passed += 1
        _add_faults(summary.faults, record.get("faults"))
        _add_assertions(summary.assertions, record.get("assertions"), record)
    summary.buckets = sorted(buckets.values(), key=lambda b: (-b.count, b.smallest_seed))
    for message, entry in (declared or {}).items():
        if message not in summary.assertions:
            summary.assertions[message] = _new_entry(entry.get("kind"), entry.get("location"))
    return summary


def _new_entry(kind: Any, location: Any) -> dict[str, Any]:
    return {"kind": kind, "location": relative_location(location), "evaluated": 0, "true": 0,
            "seeds_true": 0, "first_true_seed": None, "seeds_broken": 0,
            "first_broken_seed": None}  # fmt: skip


def _add_to_bucket(buckets: dict[str, Bucket], record: Record) -> None:
    name = record_identity(record)
    bucket = buckets.get(name)
    if bucket is not None:
        bucket.count += 1  # records come in seed order: the first one is the smallest
        return
    buckets[name] = Bucket(
        name, str(record["status"]), 1, int(record["seed"]), str(record.get("replay", "")),
        record.get("location"), record.get("message"),
        record.get("traceback") or record.get("output"),
    )  # fmt: skip


def _add_faults(totals: dict[str, dict[str, int]], faults: Any) -> None:
    """Per fault kind: seeds where it was injected, where it was effective, counts."""
    if not isinstance(faults, dict):
        return
    for kind, counts in faults.items():
        if not isinstance(counts, dict):
            continue
        entry = totals.setdefault(
            str(kind), {"seeds_on": 0, "seeds_effective": 0, "injected": 0, "effective": 0}
        )
        injected, effective = int(counts.get("injected", 0)), int(counts.get("effective", 0))
        entry["seeds_on"] += injected > 0
        entry["seeds_effective"] += effective > 0
        entry["injected"] += injected
        entry["effective"] += effective


def _add_assertions(catalog: dict[str, dict[str, Any]], assertions: Any, record: Record) -> None:
    """Merge one seed's assertion catalog: totals, and the first seed that made each true."""
    if not isinstance(assertions, dict):
        return
    for message, entry in assertions.items():
        if not isinstance(entry, dict):
            continue
        merged = catalog.get(str(message))
        if merged is None:
            merged = catalog[str(message)] = _new_entry(entry.get("kind"), entry.get("location"))
        true, evaluated = int(entry.get("true", 0)), int(entry.get("evaluated", 0))
        merged["evaluated"] += evaluated
        merged["true"] += true
        if true:
            merged["seeds_true"] += 1
            if merged["first_true_seed"] is None:
                merged["first_true_seed"] = int(record["seed"])
        if _broke(merged["kind"], evaluated, true):
            merged["seeds_broken"] += 1
            if merged["first_broken_seed"] is None:
                merged["first_broken_seed"] = int(record["seed"])


def _broke(kind: Any, evaluated: int, true: int) -> bool:
    """Whether a seed broke the claim: an `always` or invariant false once, an
    `unreachable` reached (every evaluation of one is a reach)."""
    if kind in _KEPT:
        return true < evaluated
    return kind == "unreachable" and evaluated > 0
