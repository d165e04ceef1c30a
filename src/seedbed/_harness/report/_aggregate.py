"""Reading a sweep's results file in one pass, keeping sums, never rows.

A results file can hold a million seeds. The report needs totals, failure
buckets, fault and assertion tallies and three distributions; so each line
is parsed, folded into counters and dropped. Per seed, only four numbers are
kept in flat arrays (seed, status, wall time, virtual time: about 25 bytes),
for the plots' exact bins.

Bad lines are counted, not fatal: the report shows how many and where. A last
line with no newline is a record an interrupted sweep was writing, and is
reported as such. Unknown fields and unknown kinds of line are ignored, as the
results-file contract asks of readers.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from seedbed._core import jsonl, safejson
from seedbed._core.files import MAX_LINE, NotRegular, open_regular
from seedbed._harness.sweeps._record import record_identity

STATUSES = ("pass", "fail", "crash", "timeout")
_STATUS_CODE = {status: code for code, status in enumerate(STATUSES)}
SAMPLE_SEEDS = 8  # smallest failing seeds kept per bucket
MALFORMED_SHOWN = 20
READ_VERSION = 1


class ResultsError(Exception):
    """The file cannot be reported on at all (missing, unreadable, not a results file)."""


@dataclass
class Bucket:
    """Failures that look alike: same kind and message with numbers masked."""

    name: str
    count: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)  # the smallest few, ascending
    example: dict[str, Any] = field(default_factory=dict)  # the smallest seed's record
    fewest_steps: tuple[int, int, str] | None = None  # (steps, seed, replay)

    def add(self, seed: int, status: str, record: dict[str, Any]) -> None:
        self.count += 1
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if len(self.seeds) < SAMPLE_SEEDS or seed < self.seeds[-1]:
            self.seeds.append(seed)
            self.seeds.sort()
            del self.seeds[SAMPLE_SEEDS:]
        if not self.example or seed < self.example["seed"]:
            self.example = record
        steps = record.get("steps")
        if isinstance(steps, int) and (self.fewest_steps is None or steps < self.fewest_steps[0]):
            self.fewest_steps = (steps, seed, str(record.get("replay") or ""))


@dataclass
class FaultTally:
    """One kind of fault across the sweep: how often injected, how often it mattered."""

    seeds: int = 0  # seeds that injected it at least once
    failed_seeds: int = 0  # of those, seeds that failed
    injected: int = 0
    effective: int = 0


@dataclass
class AssertionTally:
    """One assertion (by message) across the sweep."""

    kind: str
    location: str
    evaluated: int = 0
    true: int = 0
    seeds_evaluated: int = 0
    seeds_true: int = 0
    first_false_seed: int | None = None


@dataclass
class Malformed:
    line: int
    reason: str
    text: str


@dataclass
class Aggregate:
    """Everything the report shows, summed over the file."""

    path: str
    header: dict[str, Any] | None = None
    headers: int = 0
    lines: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    buckets: dict[str, Bucket] = field(default_factory=dict)
    faults: dict[str, FaultTally] = field(default_factory=dict)
    assertions: dict[str, AssertionTally] = field(default_factory=dict)
    profile_on: dict[str, list[int]] = field(default_factory=dict)  # key -> [seeds, failed]
    profiled: list[int] = field(default_factory=lambda: [0, 0])  # [seeds, failed] with a profile
    malformed: int = 0
    malformed_shown: list[Malformed] = field(default_factory=list)
    incomplete_last_line: bool = False
    seeds: array[float] = field(default_factory=lambda: array("d"))
    status_codes: bytearray = field(default_factory=bytearray)
    wall_times: array[float] = field(default_factory=lambda: array("d"))
    virtual_times: array[float] = field(default_factory=lambda: array("d"))  # NaN: unknown

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        return self.total - self.counts["pass"]

    def add_seed(self, record: dict[str, Any]) -> None:
        seed, status = record["seed"], record["status"]
        failed = status != "pass"
        self.counts[status] += 1
        self.seeds.append(float(seed))
        self.status_codes.append(_STATUS_CODE[status])
        self.wall_times.append(record["wall_time"])
        virtual = record.get("virtual_time")
        self.virtual_times.append(math.nan if virtual is None else virtual)
        if failed:
            name = record_identity(record)
            bucket = self.buckets.get(name)
            if bucket is None:
                bucket = self.buckets[name] = Bucket(name)
            bucket.add(seed, status, record)
        faults, assertions, profile = (
            record.get("faults"),
            record.get("assertions"),
            record.get("profile"),
        )
        if faults:
            self._add_faults(faults, failed)
        if assertions:
            self._add_assertions(assertions, seed)
        if profile is not None:
            self._add_profile(profile, failed)

    def _add_faults(self, faults: dict[str, Any], failed: bool) -> None:
        tallies = self.faults
        for kind, counts in faults.items():
            injected, effective = _counts(counts, "injected", "effective")
            tally = tallies.get(kind)
            if tally is None:
                tally = tallies[kind] = FaultTally()
            if injected:
                tally.seeds += 1
                tally.failed_seeds += failed
                tally.injected += injected
                tally.effective += effective

    def _add_assertions(self, assertions: dict[str, Any], seed: int) -> None:
        tallies = self.assertions
        for message, entry in assertions.items():
            tally = tallies.get(message)
            if tally is None:
                if type(entry) is not dict:
                    continue
                tally = tallies[message] = AssertionTally(
                    kind=str(entry.get("kind", "?")), location=str(entry.get("location") or "")
                )
            evaluated, true = _counts(entry, "evaluated", "true")
            if evaluated:
                tally.evaluated += evaluated
                tally.seeds_evaluated += 1
                if true:
                    tally.true += true
                    tally.seeds_true += 1
                if true < evaluated and (
                    tally.first_false_seed is None or seed < tally.first_false_seed
                ):
                    tally.first_false_seed = seed

    def _add_profile(self, profile: dict[str, Any], failed: bool) -> None:
        self.profiled[0] += 1
        self.profiled[1] += failed
        for key, value in profile.items():
            if isinstance(value, bool | int | float) and value:
                on = self.profile_on.get(key)
                if on is None:
                    on = self.profile_on[key] = [0, 0]
                on[0] += 1
                on[1] += failed

    def note_malformed(self, line: int, reason: str, raw: bytes) -> None:
        self.malformed += 1
        if len(self.malformed_shown) < MALFORMED_SHOWN:
            text = raw[:160].decode("utf-8", "replace").rstrip("\r\n")
            self.malformed_shown.append(Malformed(line, reason, text))


def _counts(entry: Any, first: str, second: str) -> tuple[int, int]:
    """Two non-negative int fields of a tally object; anything else counts as 0.

    The hot loop of the report (a few calls per seed per fault and
    assertion): `type(...) is int` also refuses bools, in one check.
    """
    if type(entry) is not dict:
        return 0, 0
    a, b = entry.get(first, 0), entry.get(second, 0)
    return (a if type(a) is int and 0 < a < _LARGEST else 0), (
        b if type(b) is int and 0 < b < _LARGEST else 0
    )


def read_results(path: str | Path) -> Aggregate:
    """Fold a results file (or a sweep directory holding results.jsonl) into an Aggregate."""
    file = Path(path)
    if file.is_dir():
        file = file / "results.jsonl"
    try:
        stream = open_regular(file)
    except NotRegular as exc:
        raise ResultsError(str(exc)) from None
    except FileNotFoundError:
        message = f"{file}: no such file (pass a sweep's results.jsonl or its directory)"
        raise ResultsError(message) from None
    except OSError as exc:
        raise ResultsError(f"{file}: cannot read it ({exc.strerror or exc})") from None
    aggregate = Aggregate(str(file))
    with stream:
        try:
            _fold(stream, aggregate)
        except OSError as exc:
            raise ResultsError(f"{file}: read failed ({exc.strerror or exc})") from None
    if aggregate.header is None and aggregate.total == 0:
        raise ResultsError(
            f"{file}: not a seedbed results file (no header line and no seed records)"
        )
    return aggregate


def _fold(stream: BinaryIO, aggregate: Aggregate) -> None:
    number = 0
    for line in jsonl.lines(stream):
        number, raw = line.number, line.raw
        if line.too_long:
            aggregate.note_malformed(number, f"longer than {MAX_LINE} bytes", raw)
            continue
        if not raw.strip():
            continue
        try:
            record = safejson.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, safejson.BadJSON):
            if not line.whole:
                aggregate.incomplete_last_line = True
                continue
            aggregate.note_malformed(number, "not valid JSON", raw)
            continue
        problem = _problem(record)
        if problem is not None:
            aggregate.note_malformed(number, problem, raw)
        elif record["kind"] == "seed":
            aggregate.add_seed(record)
        elif record["kind"] == "header":
            _take_header(aggregate, record)
    aggregate.lines = number


def _take_header(aggregate: Aggregate, header: dict[str, Any]) -> None:
    version = header.get("version")
    if isinstance(version, int) and version > READ_VERSION:
        raise ResultsError(
            f"{aggregate.path}: results version {version} is newer than this seedbed reads "
            f"({READ_VERSION}): upgrade seedbed to report on it"
        )
    aggregate.headers += 1
    if aggregate.header is None:
        aggregate.header = header


def _problem(record: Any) -> str | None:
    """Why a parsed line cannot be a record, or None if it can (unknown kinds are fine)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    kind = record.get("kind")
    if kind != "seed":
        return None if isinstance(kind, str) else 'no "kind"'
    seed = record.get("seed")
    if type(seed) is not int or not 0 <= seed < 2**64:
        return '"seed" is not an integer in [0, 2**64)'
    for name in ("error_type", "message", "bucket", "location", "replay"):
        if not isinstance(record.get(name), str | None):
            return f'"{name}" is not a string'
    steps = record.get("steps")
    if steps is not None and (type(steps) is not int or not 0 <= steps < _LARGEST):
        return '"steps" is not a non-negative integer'
    if not isinstance(record.get("status"), str) or record["status"] not in _STATUS_CODE:
        return '"status" is not pass, fail, crash or timeout'
    wall = record.get("wall_time")
    if not _is_time(wall):
        return '"wall_time" is not a number of seconds'
    virtual = record.get("virtual_time")
    if virtual is not None and not _is_time(virtual):
        return '"virtual_time" is not a number of seconds'
    for name in ("faults", "assertions", "profile"):
        if not isinstance(record.get(name), dict | None):
            return f'"{name}" is not an object'
    return None


_LARGEST = 2**62  # counts and seconds past this are damage (and overflow a float)


def _is_time(value: Any) -> bool:
    if type(value) is int:
        return 0 <= value < _LARGEST
    return type(value) is float and math.isfinite(value) and value >= 0
