"""One finished seed as a line of the results file (contract 4).

A record says what happened to the seed (`pass`, `fail`, `crash`, `timeout`),
why in one line, where in the user's code, which failures it resembles (the
bucket: the kind and message with numbers masked), and the command that
replays it. Scenario runs add their fault profile, fault effectiveness and
assertion catalog; everything else is the same for plain programs.
"""

from __future__ import annotations

import hashlib
import json
import re
import traceback
from collections.abc import Iterable
from typing import Any

from seedbed._harness.outcome import SeedOutcome
from seedbed.aio._digest import stable_repr
from seedbed.scenario._report import relative, user_location

STATUSES = ("pass", "fail", "crash", "timeout")
FAILED = ("fail", "crash", "timeout")
_TRACEBACK_LIMIT = 20_000  # characters kept of a failure's traceback

_NUMBER = re.compile(r"0x[0-9a-fA-F]+|(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def mask_numbers(text: str) -> str:
    """The message with every number replaced by <n>, so failures group by kind.

    Node names such as `n1` keep their digits: only free-standing numbers
    (and hex literals) are values that differ from seed to seed.
    """
    return _NUMBER.sub("<n>", text)


def first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else ""


def leaf_error(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: what actually failed."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def bucket_of(error_type: str, message: str, location: str | None = None) -> str:
    """A failure's identity as text: 'Kind: masked message (at file:line)'.

    Without a location (a record written before identities, a failure that
    names no line) it is the kind and masked message alone, as buckets were.
    """
    bucket = f"{error_type}: {message}".rstrip(": ")
    return f"{bucket} (at {location})" if location else bucket


# What differs from seed to seed for one bug, masked in a failure's message.
_UUID = re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b")
_QUOTED_ID = re.compile(r"""(['"])(?=[^'"\s]*\d)[^'"\s]+\1""")  # 'req-17', "c3": a word, a digit
_DIGITS = re.compile(r"(?<!\w)-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\d+")  # signed, or in a word
_INNERMOST = re.compile(r"[\[{(]([^\[\]{}()]*)[\]})]")
_SHUT = str.maketrans("[{()}]", "\x01\x02\x03\x04\x05\x06")  # a collection already sorted
_OPEN = str.maketrans("\x01\x02\x03\x04\x05\x06", "[{()}]")


def mask_message(text: str, names: Iterable[str] = ()) -> str:
    """`text` with what one bug shows differently in each seed masked.

    The world's own node and client names (`names`, known from the run;
    longest first so 'n10' is not read as 'n1') become <name>; uuids, hex ids
    and quoted one-word ids ('req-17') become <id>; every other run of
    digits, inside a word too ('n3', 'x17'), becomes <n>. The items of each
    bracketed collection are then sorted and told once, so dict and set order
    and the length of a list of ids do not split one failure in two.
    """
    for name in sorted({str(name) for name in names if name}, key=lambda n: (-len(n), n)):
        text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "<name>", text)
    text = _UUID.sub("<id>", text)
    text = _HEX.sub("<id>", text)
    text = _QUOTED_ID.sub(r"\1<id>\1", text)
    text = _DIGITS.sub("<n>", text)
    return _sorted_collections(text)


def _sorted_collections(text: str) -> str:
    """Each bracketed collection's items sorted and told once, innermost first."""
    while True:
        found = _INNERMOST.search(text)
        if found is None:
            return text.translate(_OPEN)
        opening, closing = text[found.start()], text[found.end() - 1]
        items = sorted({item.strip() for item in found.group(1).split(",") if item.strip()})
        shut = (opening + ", ".join(items) + closing).translate(_SHUT)
        text = text[: found.start()] + shut + text[found.end() :]


_KIND_ONLY = ("Deadlock", "BudgetExceeded")  # their messages list every waiting task


def failure_identity(leaf: BaseException, location: str | None, names: Iterable[str] = ()) -> str:
    """What makes two failures the same one: one function for the sweep's
    buckets, its summary and report, and the shrinker's "same failure".

    The kind (error type); for a broken claim (an `always`, an `unreachable`,
    a scenario invariant or liveness predicate) its name, else the message's
    first line masked (`mask_message`); and the user's file:line where it was
    raised (for a claim: where it was called or declared). A deadlock or a
    spent budget is its kind and the first clause of its message: the tasks
    it lists and the line the run stood at differ from seed to seed.
    """
    kind = type(leaf).__name__
    claim = getattr(leaf, "assertion", None)
    if isinstance(claim, str):
        text = claim
    elif kind in _KIND_ONLY:
        text, location = first_line(leaf).split(":")[0], None
    else:
        text = first_line(leaf)
    return bucket_of(kind, mask_message(text, names), location)


def record_identity(record: dict[str, Any]) -> str:
    """A results-file record's bucket: the identity it was written with or,
    for a record without one (written before buckets, or by hand), its kind
    and masked message."""
    bucket = record.get("bucket")
    if isinstance(bucket, str) and bucket:
        return bucket
    kind = str(record.get("error_type") or record.get("status") or "fail")
    message = record.get("message")
    if not isinstance(message, str) or not message:
        return kind
    return bucket_of(kind, mask_message(message))


def relative_location(location: Any) -> Any:
    """'file:line' with the file relative to the current directory when below it."""
    if not isinstance(location, str):
        return location
    path, sep, line = location.rpartition(":")
    return f"{relative(path)}:{line}" if sep and line.isdigit() else location


def result_digest(value: Any) -> str:
    """A short digest of a run's return value, equal for equal values in any process.

    Sets are sorted and memory addresses dropped, so neither hash order nor
    allocation shows; values that are not JSON compare by their repr. A value
    whose own methods raise (a `repr`, a key's `__hash__`, a cycle) never
    fails the record: it is digested by what `run` itself prints of it, so
    `run` and `sweep` agree that the seed passed.
    """
    try:
        text = json.dumps(value, sort_keys=True, default=_canonical, ensure_ascii=True)
    except Exception:  # the user's value: any of its methods may raise
        text = "unencodable:" + stable_repr(value)
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def _canonical(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(_ADDRESS.sub("", _repr(item)) for item in value)
    if isinstance(value, tuple):
        return list(value)
    return _ADDRESS.sub("", _repr(value))


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # a user's __repr__ may raise anything
        return stable_repr(value)


def build(seed: int, replay: str, outcome: SeedOutcome, wall_time: float) -> dict[str, Any]:
    """The results-file record of a seed that ran to an outcome (pass or fail)."""
    error = outcome.error
    record: dict[str, Any] = {
        "kind": "seed",
        "seed": seed,
        "status": "pass" if error is None else "fail",
        "error_type": None,
        "message": None,
        "bucket": None,
        "location": None,
        "replay": replay,
        "trace_hash": outcome.trace_hash,
        "steps": outcome.steps,
        "virtual_time": outcome.virtual_time,
        "wall_time": round(wall_time, 6),
        "profile": outcome.profile,
        "faults": outcome.faults,
        "assertions": outcome.assertions,
        "result_digest": None if error is not None else result_digest(outcome.value),
    }
    if error is not None:
        record.update(describe_error(error))
        if record["location"] is None and outcome.location:
            record["location"] = relative_location(outcome.location)
    record.update(outcome.extra)
    return record


def describe_error(error: BaseException) -> dict[str, Any]:
    """error_type, message, bucket, location and traceback of a failed run."""
    leaf = leaf_error(error)
    error_type, message = type(leaf).__name__, first_line(leaf)
    report = getattr(error, "report", None)
    location = user_location(leaf) or relative_location(getattr(report, "location", None))
    text = "".join(traceback.format_exception(error))
    return {
        "error_type": error_type,
        "message": message,
        "bucket": error_bucket(error),
        "location": location,
        "traceback": text[-_TRACEBACK_LIMIT:],
    }


def error_bucket(error: BaseException) -> str:
    """The bucket of a failed run: the identity (`failure_identity`) of its leaf
    error, at the user's line, with the world's names (from its report) masked."""
    leaf = leaf_error(error)
    report = getattr(error, "report", None)
    location = user_location(leaf) or relative_location(getattr(report, "location", None))
    return failure_identity(leaf, location, getattr(report, "names", ()))


def lost(seed: int, replay: str, status: str, message: str, wall_time: float) -> dict[str, Any]:
    """The record of a seed whose worker died (`crash`) or was stopped (`timeout`)."""
    error_type = "WorkerCrash" if status == "crash" else "SeedTimeout"
    return {
        "kind": "seed",
        "seed": seed,
        "status": status,
        "error_type": error_type,
        "message": message,
        # A crash's exit status or signal names the kind of death: not masked.
        "bucket": f"crash: {message}" if status == "crash" else f"timeout: {mask_numbers(message)}",
        "location": None,
        "replay": replay,
        "trace_hash": None,
        "steps": None,
        "virtual_time": None,
        "wall_time": round(wall_time, 6),
        "profile": None,
        "faults": None,
        "assertions": None,
        "result_digest": None,
    }
