"""`DIR/results.jsonl`: every finished seed, appended and flushed (contract 4).

The first line is a header naming the target, the seed range and the run
options; `--resume` appends another header and then the seeds still missing.
Each record goes out in one `write` on a file opened for appending, before the
sweep reports it, so whatever kills the sweep leaves every reported seed on
disk. A line cut short by a kill mid-write is dropped on resume (and the file
trimmed back to the last whole line); any other malformed line is an error
naming the line. Readers ignore fields and kinds they do not know, but a
field they do know must have its type (a list where a message belongs, a
5,000-digit number, nesting past `safejson.MAX_DEPTH`): any other line is a
one-line error, never a traceback from the code that reads the record later.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._core import jsonl, safejson
from seedbed._core.files import MAX_LINE, NotRegular, open_regular
from seedbed._core.validate import SEED_LIMIT
from seedbed._harness.sweeps._record import STATUSES
from seedbed.errors import UsageError

Record = dict[str, Any]
VERSION = 1


@dataclass
class Results:
    """What a results file holds: its headers and the latest record per seed."""

    headers: list[Record] = field(default_factory=list)
    seeds: dict[int, Record] = field(default_factory=dict)
    rechecks: dict[int, Record] = field(default_factory=dict)  # the latest per seed
    whole_bytes: int = 0  # the length up to the last complete line


def read_results(path: Path) -> Results:
    """Read a results file; refuse a damaged one with the line that is wrong."""
    results = Results()
    try:
        with open_regular(path) as stream:
            for line in jsonl.lines(stream):
                if not line.whole:  # no newline: cut short by a kill mid-write
                    break
                if line.raw.strip():
                    _take(results, _parse(path, line))
                results.whole_bytes = line.end
    except NotRegular as exc:
        raise UsageError(f"{exc}; move it away") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    return results


_TEXT = ("error_type", "message", "bucket", "location", "replay", "trace_hash", "result_digest",
         "traceback", "output")  # fmt: skip
_TALLIES = {"faults": ("injected", "effective"), "assertions": ("evaluated", "true")}
_TIMES = ("wall_time", "virtual_time")
_OBJECTS = ("faults", "assertions", "profile")
_LARGEST = 2**62  # steps and seconds past this are damage, and would overflow a float sum


def _parse(path: Path, line: jsonl.Line) -> Record:
    number = line.number
    if line.too_long:
        raise UsageError(
            f"{path}:{number}: a line longer than {MAX_LINE} bytes; move the file away"
        )
    try:
        record = jsonl.parse_object(line.raw)
    except safejson.BadJSON as exc:
        raise UsageError(f"{path}:{number}: not a JSON line ({exc}); move the file away") from None
    problem = _problem(record)
    if problem is not None:
        raise UsageError(f"{path}:{number}: {problem}; move the file away")
    return record


def _problem(record: Record) -> str | None:
    """What is wrong with a record's known fields, or None."""
    kind = record.get("kind")
    if kind == "header":
        if not isinstance(record.get("target"), str) or not isinstance(record.get("options"), dict):
            return "a header needs a string 'target' and an object 'options'"
        return None
    if kind != "seed":
        return None
    seed, status = record.get("seed"), record.get("status")
    if type(seed) is not int or not 0 <= seed < SEED_LIMIT or status not in STATUSES:
        return (
            f"a seed record needs an integer 'seed' in [0, 2**64) and a 'status' of "
            f"{', '.join(STATUSES)}"
        )
    for name in _TEXT:
        if not isinstance(record.get(name), str | None):
            return f"'{name}' must be a string"
    for name in _TIMES:
        if not _is_number(record.get(name)):
            return f"'{name}' must be a number of seconds"
    steps = record.get("steps")
    if steps is not None and (type(steps) is not int or not 0 <= steps < _LARGEST):
        return "'steps' must be a non-negative integer"
    for name in _OBJECTS:
        if not isinstance(record.get(name), dict | None):
            return f"'{name}' must be an object"
    for name, counts in _TALLIES.items():
        for entry in (record.get(name) or {}).values():
            if isinstance(entry, dict) and not _tally_ok(entry, counts):
                return f"'{name}' holds an entry whose counts are not non-negative integers"
    return None


def _tally_ok(entry: dict[str, Any], counts: tuple[str, ...]) -> bool:
    """A fault's or assertion's entry: counts are integers, its words are strings."""
    if not all(isinstance(entry.get(word), str | None) for word in ("kind", "location")):
        return False
    return all(type(entry.get(count, 0)) is int and _is_number(entry.get(count, 0))
               for count in counts)  # fmt: skip


def _is_number(value: object) -> bool:
    if value is None:
        return True
    if type(value) is int:
        return 0 <= value < _LARGEST
    return type(value) is float and math.isfinite(value) and value >= 0


def _take(results: Results, record: Record) -> None:
    if record.get("kind") == "header":
        results.headers.append(record)
    elif record.get("kind") == "seed":
        results.seeds[record["seed"]] = record
    elif record.get("kind") == "recheck" and type(record.get("seed")) is int:
        results.rechecks[record["seed"]] = record


def check_resumable(path: Path, results: Results, header: Record) -> None:
    """Refuse to resume a sweep of another target or with other run options."""
    if not results.headers:
        raise UsageError(f"{path} has no header line: not a seedbed sweep; move it away")
    previous = results.headers[-1]
    for key in ("target", "options"):
        if previous.get(key) != header[key]:
            raise UsageError(
                f"{path} holds a sweep with {key} {json.dumps(previous.get(key))}, not "
                f"{json.dumps(header[key])}: resume with the same {key}, or sweep into "
                "another --out directory"
            )


class ResultsWriter:
    """Appends records to a results file, each one on disk before it is reported."""

    def __init__(self, path: Path, *, keep_bytes: int | None) -> None:
        """Open `path` for appending; `keep_bytes=None` starts it afresh."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        self._fd = os.open(path, flags | (os.O_TRUNC if keep_bytes is None else 0), 0o644)
        if keep_bytes is not None:
            os.ftruncate(self._fd, keep_bytes)  # drop a line cut short by a kill

    def append(self, record: Record) -> None:
        data = (json.dumps(record, default=str) + "\n").encode()
        while data:
            try:
                written = os.write(self._fd, data)
            except OSError as exc:  # name the file: a bare "[Errno 28]" says nothing of where
                raise OSError(exc.errno, exc.strerror, str(self.path)) from None
            data = data[written:]

    def close(self) -> None:
        os.close(self._fd)
