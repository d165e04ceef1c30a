"""`OUT/explore.jsonl` read back: every line checked before a search or a report uses it.

The log is a header line, then one line per finished run and a stop line per
session (`_store` writes it; docs/reference/file-formats.md describes it).
It is read a bounded line at a time (`seedbed._core.jsonl`), from a regular
file only, and each line's known fields must have their types: a list where
a feature name belongs, a number where a file path belongs (an integer
`entry` was once opened as a file descriptor), a string where a count
belongs. A missing field reads as empty, as readers of seedbed's files treat
fields they know; unknown fields are ignored. A line that fails is a
`problem` with the line's number, which `--resume` refuses and `report`
counts; neither ever meets it as a traceback later.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core import jsonl, safejson
from seedbed._core.files import MAX_LINE, open_regular
from seedbed._harness.sweeps._record import STATUSES

KIND = "seedbed explore"
LOG = "explore.jsonl"
LARGEST = 2**62  # run numbers, steps and draw positions past this are damage
_FLOATABLE = 2**1023  # an int past this does not convert to a float

Line = dict[str, Any]


@dataclass(frozen=True)
class Checked:
    """One line of the log: the line (None when it is bad) or what is wrong with it."""

    number: int
    line: Line | None
    problem: str | None = None
    raw: bytes = b""


class LogFile:
    """A log's lines after its header, in order, each checked; iterate once, in a
    `with` block. A bad line before the header is sound is yielded as a problem.

    After the lines: `header` is the header line (None if none was sound),
    `whole_bytes` the length up to the last complete line, and `torn` whether
    a last line with no newline (a killed writer's) was left.
    """

    def __init__(self, path: Path) -> None:
        """Open `path` (`NotRegular` for a FIFO, device or folder; `OSError` if unreadable)."""
        self.path = path
        self._stream = open_regular(path)
        self.whole_bytes = 0
        self.torn = False
        self.header: Line | None = None  # the first line, once read and found sound

    def __enter__(self) -> LogFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.close()

    def __iter__(self) -> Iterator[Checked]:
        for read in jsonl.lines(self._stream):
            if not read.whole and not read.too_long:
                self.torn = True
                return
            if read.whole:
                self.whole_bytes = read.end
            if read.raw.strip() or read.too_long:
                checked = _check(read, first=self.header is None)
                if self.header is None and checked.line is not None:
                    self.header = checked.line
                    continue
                yield checked


def _check(read: jsonl.Line, *, first: bool) -> Checked:
    """The line, checked as the header when it is the first, else as a run or stop."""
    if read.too_long:
        return Checked(read.number, None, f"a line longer than {MAX_LINE} bytes", read.raw)
    try:
        line = jsonl.parse_object(read.raw)
    except safejson.BadJSON as exc:
        return Checked(read.number, None, f"not a JSON line ({exc})", read.raw)
    problem = header_problem(line) if first else line_problem(line)
    return Checked(read.number, None if problem else line, problem, read.raw)


def header_problem(line: Line) -> str | None:
    """What is wrong with a log's first line, or None."""
    if line.get("kind") != KIND:
        return f'the first line is not a {KIND} header (its "kind" is not {KIND!r})'
    if not isinstance(line.get("target"), str):
        return "the header needs a string 'target'"
    if not _maybe(lambda options: isinstance(options, dict), line.get("options")):
        return "the header's 'options' must be an object"
    for name in ("version", "seed", "batch"):
        if not _maybe(_count, line.get(name)):
            return f"the header's '{name}' must be a non-negative integer"
    return None


def line_problem(line: Line) -> str | None:
    """What is wrong with a run or stop line's known fields, or None."""
    kind = line.get("kind")
    if kind == "run":
        return _run_problem(line)
    if kind == "stop":
        return _first(_STOP, line)
    if kind == KIND:
        return "a second header line"
    return None  # a kind this seedbed does not know: ignored, as readers do


def _run_problem(line: Line) -> str | None:
    if not _count(line.get("index")):
        return "a run line needs a non-negative integer 'index'"
    if line.get("status") not in (None, *STATUSES):
        return f"'status' must be one of {', '.join(STATUSES)}"
    plan = line.get("plan")
    if not isinstance(plan, dict) or not isinstance(plan.get("kind"), str):
        return "'plan' must be an object with a string 'kind'"
    if not _maybe(_count, plan.get("parent")):
        return "the plan's 'parent' must be a non-negative integer"
    return _first(_RUN, line)


def _count(value: object) -> bool:
    return type(value) is int and 0 <= value < LARGEST


def _number(value: object) -> bool:
    """An int or float, not NaN (a best value may be infinite); an int a float can
    hold (`f"{value:g}"` of 10**400 raises OverflowError)."""
    if type(value) is float:
        return not math.isnan(value)
    return type(value) is int and -_FLOATABLE < value < _FLOATABLE


def _moment(value: object) -> bool:
    """A virtual time: a finite number of seconds, not negative."""
    return _number(value) and 0 <= value < LARGEST  # type: ignore[operator]


def _maybe(test: Callable[[Any], bool], value: object) -> bool:
    return value is None or test(value)


def _text(value: object) -> bool:
    return isinstance(value, str)


def _list_of(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(test(item) for item in value)


def _pair(value: object) -> bool:
    """A run of draws from one stream: [stream number, how many]."""
    return isinstance(value, list) and len(value) == 2 and all(_count(n) for n in value)


def _extremes(value: object) -> bool:
    return isinstance(value, dict) and all(_number(v) for v in value.values())


_TEXTS = _list_of(_text)
# field -> (its check, what it must be); a missing field reads as empty
_RUN: dict[str, tuple[Callable[[Any], bool], str]] = {
    "steps": (_count, "a non-negative integer"),
    "new": (_TEXTS, "a list of feature names"),
    "features": (_TEXTS, "a list of feature names"),
    "declared": (_TEXTS, "a list of feature names"),
    "improved": (_extremes, "an object of numbers"),
    "entry": (_text, "a file path (a string)"),
    "failure_file": (_text, "a file path (a string)"),
    "bucket": (_text, "a string"),
    "message": (_text, "a string"),
    "replay": (_text, "a string"),
    "order": (_list_of(_pair), "a list of [stream, draws] pairs of integers"),
    "at": (_list_of(_count), "a list of non-negative integers"),
    "when": (_list_of(_moment), "a list of virtual times (seconds)"),
}
_STOP: dict[str, tuple[Callable[[Any], bool], str]] = {
    "stopped": (_text, "a string"),
    "runs": (_count, "a non-negative integer"),
    "ran": (_count, "a non-negative integer"),
    "seconds": (_number, "a number"),
    "budget": (lambda value: isinstance(value, dict), "an object"),
}


def _first(fields: dict[str, tuple[Callable[[Any], bool], str]], line: Line) -> str | None:
    """The first field present with the wrong type, as a reason; None if all are fine."""
    for name, (test, what) in fields.items():
        value = line.get(name)
        if value is not None and not test(value):
            return f"'{name}' must be {what}"
    return None
