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
import os
import re
import sysconfig
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from seedbed import _core
from seedbed._harness.outcome import SeedOutcome
from seedbed.aio._digest import stable_repr

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


def bucket_of(error_type: str, message: str) -> str:
    return f"{error_type}: {mask_numbers(message)}".rstrip(": ")


def user_location(error: BaseException) -> str | None:
    """'file:line' of the innermost frame in the user's code, or None.

    Frames in seedbed itself and in the standard library are skipped, so a
    failed assertion names the user's line, not the loop that ran it.
    """
    found: str | None = None
    for path, line in _frames(error.__traceback__):
        if not _is_library(path):
            found = f"{_relative(path)}:{line}"
    return found


def _frames(tb: TracebackType | None) -> list[tuple[str, int]]:
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return frames


_LIBRARY_DIRS = tuple(
    str(Path(folder).resolve()) + os.sep
    for folder in {
        os.path.dirname(os.path.dirname(_core.__file__)),  # seedbed's own folder
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["platstdlib"],
    }
)


def _is_library(path: str) -> bool:
    if path.startswith("<"):
        return True  # <frozen ...>, <string>
    return str(Path(path).resolve()).startswith(_LIBRARY_DIRS)


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def relative_location(location: Any) -> Any:
    """'file:line' with the file relative to the current directory when below it."""
    if not isinstance(location, str):
        return location
    path, sep, line = location.rpartition(":")
    return f"{_relative(path)}:{line}" if sep and line.isdigit() else location


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
    location = (
        user_location(leaf)
        or (user_location(leaf.__cause__) if leaf.__cause__ is not None else None)
        or relative_location(getattr(report, "location", None))
    )
    text = "".join(traceback.format_exception(error))
    return {
        "error_type": error_type,
        "message": message,
        "bucket": error_bucket(leaf),
        "location": location,
        "traceback": text[-_TRACEBACK_LIMIT:],
    }


def error_bucket(leaf: BaseException) -> str:
    """The bucket of a failed run's leaf error: its type and first line with numbers
    masked, or, for a broken `always` claim, the claim without its details (which
    differ from seed to seed while the claim is the same; see InvariantViolation)."""
    claim = getattr(leaf, "assertion", None)
    text = claim if isinstance(claim, str) else first_line(leaf)
    return bucket_of(type(leaf).__name__, text)


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
