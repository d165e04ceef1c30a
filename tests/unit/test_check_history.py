"""Histories, pairing rules and the JSON Lines recorder a simulation writes."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from seedbed.check import (
    Event,
    History,
    HistoryError,
    Recorder,
    linearizable,
    parse_jsonl,
    read_jsonl,
    register,
)
from seedbed.errors import UsageError


def ticking_clock() -> float:
    ticking_clock.now += 0.5  # type: ignore[attr-defined]
    return float(ticking_clock.now)  # type: ignore[attr-defined]


def test_operations_pair_invocations_with_completions() -> None:
    history = History(
        [
            Event(1, "invoke", "write", 3),
            Event(2, "invoke", "read"),
            Event(1, "ok", "write", 3),
            Event(3, "invoke", "write", 4),
            Event(3, "fail", "write"),
            Event(2, "info", "read"),
            Event(4, "invoke", "read"),
        ]
    )
    ops = history.operations()
    assert [(op.id, op.process, op.f, op.status) for op in ops] == [
        (0, 1, "write", "ok"),
        (1, 2, "read", "info"),
        (2, 3, "write", "fail"),
        (3, 4, "read", "info"),
    ]
    assert (ops[0].call, ops[0].ret) == (0, 2)
    assert ops[1].ret is None and ops[1].result is None  # unknown outcome
    assert ops[3].ret is None  # still open at the end: unknown too
    assert not ops[1].known and ops[0].known


def test_a_process_may_invoke_again_after_an_unknown_outcome() -> None:
    history = History(
        [Event(0, "invoke", "write", 1), Event(0, "info", "write"), Event(0, "invoke", "read")]
    )
    assert len(history.operations()) == 2


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        ([Event(0, "ok", "read", 1)], "no open invocation"),
        ([Event(0, "invoke", "read"), Event(0, "invoke", "read")], "still open"),
        ([Event(0, "invoke", "read"), Event(0, "ok", "write", 1)], "completes an invocation"),
        ([Event(0, "begin", "read")], "unknown event type"),  # type: ignore[arg-type]
    ],
)
def test_malformed_histories_are_rejected(events: list[Event], reason: str) -> None:
    with pytest.raises(HistoryError, match=reason):
        History(events)


def test_recorder_writes_json_lines_that_read_back_identically(tmp_path: Path) -> None:
    ticking_clock.now = 0.0  # type: ignore[attr-defined]
    path = tmp_path / "history.jsonl"
    with Recorder(path, clock=ticking_clock) as recorder:
        recorder.invoke("a", "cas", [1, 2])
        recorder.invoke("b", "read")
        recorder.ok("a", True)
        recorder.fail("b")
        with recorder.operation("b", "write", {"nested": [1, 2]}) as op:
            op.ok()
        recorder.invoke("c", "read")  # left open

    back = read_jsonl(path)
    assert back.to_jsonl() == recorder.history.to_jsonl() == path.read_text()
    assert [e.time for e in back] == [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    assert back[0].value == (1, 2)  # arrays come back as (hashable) tuples
    assert back[4].value == {"nested": (1, 2)}
    assert [op.status for op in back.operations()] == ["ok", "fail", "ok", "info"]


def test_recorder_operation_records_info_when_the_block_raises() -> None:
    recorder = Recorder(io.StringIO(), clock=lambda: None)
    with pytest.raises(TimeoutError), recorder.operation(7, "write", 1):
        raise TimeoutError
    (event,) = [e for e in recorder.history if e.type != "invoke"]
    assert (event.type, event.value) == ("info", "TimeoutError")
    assert event.time is None


def test_recorder_uses_the_event_loop_clock_by_default() -> None:
    async def client() -> Recorder:
        recorder = Recorder()
        recorder.invoke(0, "write", 1)
        await asyncio.sleep(0)
        recorder.ok(0, 1)
        recorder.invoke(0, "read")
        recorder.ok(0, 1)
        return recorder

    recorder = asyncio.run(client())
    times = [e.time for e in recorder.history]
    assert all(isinstance(t, float) for t in times)
    assert linearizable(recorder.history, register())


def test_recorder_refuses_misuse() -> None:
    recorder = Recorder(clock=lambda: None)
    with pytest.raises(UsageError):
        recorder.ok(0)
    recorder.invoke(0, "read")
    with pytest.raises(UsageError):
        recorder.invoke(0, "read")


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ('{"process": 0, "type": "invoke", "f": "read"}\nnot json\n', ":2:", "invalid JSON"),
        ("[1, 2]\n", ":1:", "expected a JSON object"),
        ('{"process": 0, "f": "read"}\n', ":1:", "missing field 'type'"),
        ('{"process": 0, "type": "done", "f": "read"}\n', ":1:", "unknown event type"),
        ('{"process": 0, "type": "ok", "f": "read"}\n', ":1:", "no open invocation"),
        ('{"process": 0, "type": "invoke", "f": "r", "time": "x"}\n', ":1:", "'time'"),
    ],
)
def test_jsonl_errors_name_the_file_and_line(text: str, where: str, reason: str) -> None:
    with pytest.raises(HistoryError) as info:
        parse_jsonl("\n" * 0 + text, "h.jsonl")
    message = str(info.value)
    assert message.startswith("h.jsonl" + where)
    assert reason in message
    assert "\n" not in message
