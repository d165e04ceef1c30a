"""Hand-made histories whose verdicts, witnesses and orders are known."""

from __future__ import annotations

from typing import Any

import pytest

from seedbed.check import Event, History, Outcome, cas_register, kv, linearizable, register
from seedbed.errors import UsageError


def history(*steps: tuple[Any, ...]) -> History:
    """Steps ``(process, type, value)``; ``f`` follows from an ``invoke`` ``(p, f, value)``."""
    opened: dict[Any, str] = {}
    events = []
    for process, kind, *rest in steps:
        if kind in ("write", "read", "cas", "get", "put", "append"):
            opened[process] = kind
            events.append(Event(process, "invoke", kind, rest[0] if rest else None))
        else:
            events.append(Event(process, kind, opened[process], rest[0] if rest else None))
    return History(events)


def test_sequential_history_is_linearizable_in_its_own_order() -> None:
    h = history((0, "write", 1), (0, "ok"), (1, "read"), (1, "ok", 1), (0, "write", 2), (0, "ok"))
    verdict = linearizable(h, register())
    assert verdict.outcome is Outcome.LINEARIZABLE and bool(verdict)
    assert [op.f for op in verdict.order] == ["write", "read", "write"]


def test_stale_read_is_not_linearizable_and_the_witness_says_which_ops() -> None:
    h = history(
        (0, "write", 1), (0, "ok"),
        (2, "read"), (2, "ok", 1),
        (0, "write", 2), (0, "ok"),
        (1, "read"), (1, "ok", 1),  # stale: write 2 completed before this read began
    )  # fmt: skip
    verdict = linearizable(h, register())
    assert verdict.outcome is Outcome.NOT_LINEARIZABLE and not verdict
    assert verdict.witness_minimal
    assert sorted((op.f, op.value, op.result) for op in verdict.witness) == [
        ("read", None, 1), ("write", 2, None)
    ]  # fmt: skip
    assert [op.f for op in verdict.order] == ["write", "read", "write"]  # the longest that worked
    text = verdict.explain()
    assert "cannot be ordered" in text and "write(2)" in text and "read() -> 1" in text


def test_overlapping_writes_may_take_effect_in_either_order() -> None:
    # The search tries write 1 then write 2 first; only the other order explains the read,
    # so remembering (set, state) pairs must not prune it.
    h = history((0, "write", 1), (1, "write", 2), (0, "ok"), (1, "ok"), (2, "read"), (2, "ok", 1))
    assert linearizable(h, register())
    h2 = history((0, "write", 1), (1, "write", 2), (0, "ok"), (1, "ok"), (2, "read"), (2, "ok", 3))
    assert not linearizable(h2, register())


def test_an_unknown_outcome_may_take_effect_late_or_never_but_not_undo() -> None:
    base = [(0, "write", 0), (0, "ok"), (1, "write", 1), (1, "info")]
    never = history(*base, (2, "read"), (2, "ok", 0))
    late = history(*base, (2, "read"), (2, "ok", 0), (2, "read"), (2, "ok", 1))
    undone = history(*base, (2, "read"), (2, "ok", 1), (2, "read"), (2, "ok", 0))
    still_open = history((0, "write", 0), (0, "ok"), (1, "write", 1), (2, "read"), (2, "ok", 1))
    assert linearizable(never, register())
    assert linearizable(late, register())
    assert not linearizable(undone, register())
    assert linearizable(still_open, register())


def test_failed_operations_had_no_effect() -> None:
    h = history((0, "write", 5), (0, "fail"), (1, "read"), (1, "ok", 5))
    assert not linearizable(h, register())


def test_cas_failure_constrains_the_register() -> None:
    ok = history((0, "write", 1), (0, "ok"), (1, "cas", (0, 2)), (1, "ok", False))
    bad = history((0, "write", 0), (0, "ok"), (1, "cas", (0, 2)), (1, "ok", False))
    assert linearizable(ok, cas_register())
    assert not linearizable(bad, cas_register())


def test_kv_is_checked_per_key_and_names_the_failing_key() -> None:
    h = history(
        (0, "put", ("a", "x")), (0, "ok", ("a", "x")),
        (1, "append", ("b", "y")), (1, "ok", ("b", "y")),
        (0, "get", ("a", None)), (0, "ok", ("a", "x")),
        (1, "get", ("b", None)), (1, "ok", ("b", "yy")),
    )  # fmt: skip
    verdict = linearizable(h, kv())
    assert not verdict
    assert verdict.part == "b"
    assert {op.value[0] for op in verdict.witness} == {"b"}


def many_concurrent_writes(n: int) -> History:
    """n overlapping writes and a read of a value nobody wrote: hard to refute."""
    steps: list[tuple[Any, ...]] = [(p, "write", p) for p in range(n)]
    steps += [(p, "ok") for p in range(n)]
    steps += [(n, "read"), (n, "ok", -1)]
    return history(*steps)


def test_timeout_gives_unknown_not_a_guess() -> None:
    verdict = linearizable(many_concurrent_writes(60), register(), timeout=0.05)
    assert verdict.outcome is Outcome.UNKNOWN
    assert not verdict
    assert verdict.seconds < 5


def test_a_witness_shrunk_past_the_deadline_is_still_unorderable() -> None:
    verdict = linearizable(many_concurrent_writes(8), register())
    assert not verdict
    assert [op.f for op in verdict.witness] == ["read"]  # the read alone is impossible
    assert verdict.witness_minimal


def test_verdicts_are_deterministic() -> None:
    h = history((0, "write", 1), (1, "write", 2), (0, "ok"), (1, "ok"), (2, "read"), (2, "ok", 1))
    first = linearizable(h, register())
    assert [op.id for op in first.order] == [op.id for op in linearizable(h, register()).order]


def test_a_history_nothing_could_refuse_is_vacuous_unless_allowed() -> None:
    writes_only = [Event(0, "invoke", "write", 1), Event(0, "ok", "write", 1)]
    for events in ([], writes_only, [Event(1, "invoke", "read"), Event(1, "info", "read")]):
        verdict = linearizable(events, register())
        assert verdict.outcome is Outcome.VACUOUS and not verdict
        assert "cannot show linearizability: no read succeeded" in verdict.explain()
        assert linearizable(events, register(), allow_empty=True)
    assert linearizable([*writes_only, Event(1, "invoke", "read"), Event(1, "ok", "read", 1)],
                        register())  # fmt: skip


def test_negative_timeout_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        linearizable([], register(), timeout=-1)
