"""The trace: a running hash of events, kept or checked, and its JSON Lines file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seedbed._core import Trace
from seedbed._core.tracefile import read_trace, write_trace
from seedbed._core.version import TRACE_FORMAT
from seedbed.errors import Nondeterminism, UsageError

EVENTS = [
    ("time", 1500, 3),
    ("draw", "net", "delay", 3),
    ("draw", "loop", "x", 0.25),
    ("task", 1, "main"),
]


def fold(trace: Trace, events: list[tuple[object, ...]]) -> Trace:
    for event in events:
        if event[0] == "time":
            trace.time(event[1], event[2])  # type: ignore[arg-type]
        else:
            trace.emit(*event)  # type: ignore[arg-type]
    return trace


def test_the_hash_is_the_same_whether_events_are_kept_checked_or_not() -> None:
    plain = fold(Trace(), EVENTS)
    kept = fold(Trace(keep=True), EVENTS)
    checked = fold(Trace(expected=EVENTS), EVENTS)  # type: ignore[arg-type]
    assert plain.hash == kept.hash == checked.hash
    assert plain.count == kept.count == 4
    assert kept.events == EVENTS


def test_any_difference_in_an_event_changes_the_hash() -> None:
    base = fold(Trace(), EVENTS).hash
    for changed in (
        [("time", 1501, 3), *EVENTS[1:]],
        [("time", 1500, 4), *EVENTS[1:]],
        [EVENTS[0], ("draw", "net", "delay", 4), *EVENTS[2:]],
        [EVENTS[1], EVENTS[0], *EVENTS[2:]],
        EVENTS[:-1],
    ):
        assert fold(Trace(), changed).hash != base


def test_checking_raises_at_the_first_differing_event_with_recorded_and_actual() -> None:
    trace = Trace(expected=EVENTS)  # type: ignore[arg-type]
    trace.time(1500, 3)
    with pytest.raises(Nondeterminism) as caught:
        trace.emit("draw", "net", "delay", 9)
    message = str(caught.value)
    assert "at event 1" in message
    assert "recorded: draw net delay 3" in message
    assert "actual:   draw net delay 9" in message
    assert trace.divergence is caught.value


def test_checking_notices_a_run_that_ends_early_or_goes_on_too_long() -> None:
    short = fold(Trace(expected=EVENTS), EVENTS[:2])  # type: ignore[arg-type]
    with pytest.raises(Nondeterminism, match="ended before the recorded trace"):
        short.check_complete()
    long = fold(Trace(expected=EVENTS[:1]), EVENTS[:1])  # type: ignore[arg-type]
    with pytest.raises(Nondeterminism, match=r"recorded: \(end of trace\)"):
        long.emit("task", 2, "extra")


def write_sample(path: Path) -> None:
    header = {"seedbed": "0.1.0", "format": TRACE_FORMAT, "python": "3.11.7", "seed": 5,
              "options": {}}  # fmt: skip
    write_trace(path, header, list(EVENTS), {"end": 4, "hash": "00", "failure": None})


def test_a_trace_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_sample(path)
    loaded = read_trace(path)
    assert loaded.seed == 5
    assert loaded.events == EVENTS
    assert loaded.end["end"] == 4


@pytest.mark.parametrize(
    ("mangle", "line", "what"),
    [
        (lambda lines: lines[:-1], 5, "truncated"),
        (lambda lines: [*lines[:3], lines[3][:7]], 4, "not valid JSON"),
        (lambda lines: ['{"no": "header"}', *lines[1:]], 1, "header"),
        (lambda lines: [lines[0], "[1, 2]", *lines[2:]], 2, "event array"),
        (lambda lines: [lines[0], '["x", {"nested": 1}]', *lines[2:]], 2, "not a string or number"),
        (lambda lines: [*lines[:2], lines[-1], *lines[2:]], 3, "middle"),
        (lambda lines: [], 1, "empty"),
    ],
)
def test_a_damaged_trace_file_is_refused_in_one_line_naming_the_line(
    tmp_path: Path, mangle: object, line: int, what: str
) -> None:
    path = tmp_path / "t.jsonl"
    write_sample(path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(mangle(lines)) + "\n")  # type: ignore[operator]
    with pytest.raises(UsageError) as caught:
        read_trace(path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"t.jsonl:{line}:" in message
    assert what in message


def test_a_missing_trace_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        read_trace(tmp_path / "absent.jsonl")


def test_trace_files_are_plain_json_never_pickle(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_sample(path)
    for line in path.read_text().splitlines():
        json.loads(line)
