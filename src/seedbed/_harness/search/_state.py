"""The search's state: the corpus, the features seen, the failure buckets.

Every finished run becomes one line (`line_of`), and the state changes only
by applying lines in run order (`apply`), whether the run just finished or
its line was read back by `--resume`: one path, so a resumed search is the
search that was interrupted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from seedbed._core.choices import Choice
from seedbed._harness.search._features import improves
from seedbed._harness.search._plan import Candidate, Plan


@dataclass
class Entry:
    """A corpus entry: a passing run that reached something no earlier run had."""

    id: int
    run: int
    seed: int
    choices: Sequence[Choice]  # read from its file when a plan looks (`_corpus`)
    found: list[str]  # what it reached first (features, and extremes it improved)
    last_found: int
    file: str
    at: list[int]  # where in its draws it reached them: where to branch from
    when: list[float]  # and at what virtual times (coverage points, extremes): where to strike
    followed: int = 0  # its follow-ups run so far (`_plan.follow_ups`)


@dataclass
class Bucket:
    """One failure identity: its first run, how many runs failed so, its choice file."""

    bucket: str
    message: str
    first: int
    count: int
    file: str


@dataclass
class State:
    runs: int = 0
    seen: dict[str, int] = field(default_factory=dict)  # feature -> first run that reached it
    declared: dict[str, None] = field(default_factory=dict)  # reachable, reached or not
    extremes: dict[str, float] = field(default_factory=dict)
    corpus: list[Entry] = field(default_factory=list)
    buckets: dict[str, Bucket] = field(default_factory=dict)
    # kind -> [runs, runs that found something, runs that failed]
    kinds: dict[str, list[int]] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)  # feature -> runs that reached it
    failed_runs: int = 0

    def candidates(self) -> list[Candidate]:
        return [
            Candidate(
                entry.choices,
                entry.last_found,
                entry.at,
                self._rarest(entry),
                entry.when,
                entry.followed,
            )
            for entry in self.corpus
        ]

    def _rarest(self, entry: Entry) -> int:
        """How many runs reached the rarest feature the entry found (1 for a best value)."""
        counts = [self.hits.get(feature, 1) for feature in entry.found]
        return min(counts) if counts else 1

    def line_of(self, plan: Plan, result: dict[str, Any]) -> dict[str, Any]:
        """The run's line: what it found that the state had not (nothing is applied)."""
        new = [f for f in result["features"] if f not in self.seen]
        improved = {
            key: value for key, value in result["extremes"].items()
            if improves(key, value, self.extremes.get(key))
        }  # fmt: skip
        failure = result.get("failure")
        line: dict[str, Any] = {
            "kind": "run",
            "index": plan.index,
            "plan": plan.to_json(),
            "status": result["status"],
            "steps": result.get("steps"),
            "new": new,
            "features": list(result["features"]),
            "declared": [f for f in result["declared"] if f not in self.declared],
            "improved": improved,
            "entry": None,
            "bucket": failure["bucket"] if failure else None,
            "message": failure["message"] if failure else None,
            "failure_file": None,
        }
        positions = result.get("positions", {})
        found = [*new, *improved]
        line["at"] = sorted({positions[key] for key in found if key in positions})
        times = result.get("times", {})
        line["when"] = sorted({times[key] for key in found if key in times})
        return line

    def keeps(self, line: dict[str, Any]) -> bool:
        """Whether the run joins the corpus: it passed and found something."""
        return line["status"] == "pass" and bool(line["new"] or line["improved"])

    def new_bucket(self, line: dict[str, Any]) -> bool:
        return line["bucket"] is not None and line["bucket"] not in self.buckets

    def apply(self, line: dict[str, Any], chosen: Sequence[Choice] | None) -> None:
        """Fold a run's line (and, if it joins the corpus, its choices) into the state.

        Nothing of the line is kept but counts and, for a corpus entry, what it
        found and where: a long search holds a few numbers per run, no line."""
        plan = Plan.from_json(line["plan"])
        index = plan.index
        new, improved = line.get("new") or [], line.get("improved") or {}
        for feature in new:
            self.seen.setdefault(feature, index)
        for feature in line.get("features") or ():
            self.hits[feature] = self.hits.get(feature, 0) + 1
        for feature in line.get("declared") or ():
            self.declared[feature] = None
        self.extremes.update(improved)
        found = bool(new or improved)
        tally = self.kinds.setdefault(plan.kind, [0, 0, 0])
        tally[0] += 1
        tally[1] += int(found)
        tally[2] += int(line.get("bucket") is not None)
        if plan.parent is not None and plan.parent < len(self.corpus):
            parent = self.corpus[plan.parent]
            parent.followed += bool(plan.follow)
            if found:
                parent.last_found = index
        if line.get("entry") is not None and chosen is not None:
            what = [*new, *(f"{key} {value:g}" for key, value in improved.items())]
            self.corpus.append(Entry(len(self.corpus), index, plan.seed, chosen, what,
                                     index, line["entry"], line.get("at") or [],
                                     line.get("when") or []))  # fmt: skip
        self._count_failure(line)
        self.runs = index + 1

    def _count_failure(self, line: dict[str, Any]) -> None:
        bucket = line.get("bucket")
        if bucket is None:
            return
        self.failed_runs += 1
        known = self.buckets.get(bucket)
        if known is None:
            self.buckets[bucket] = Bucket(bucket, line.get("message") or "", line["index"], 1,
                                          line.get("failure_file") or "")  # fmt: skip
        else:
            known.count += 1

    @property
    def first_failure(self) -> int | None:
        """The index of the first failing run (None: none failed)."""
        firsts = [bucket.first for bucket in self.buckets.values()]
        return min(firsts) if firsts else None

    def never_reached(self) -> list[str]:
        """Features some run could have reached and none did, sorted."""
        return sorted(f for f in self.declared if f not in self.seen)
