"""Each built-in model accepts exactly what its sequential object allows."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pytest

from seedbed.check import (
    ILLEGAL,
    Event,
    History,
    Model,
    ModelError,
    Operation,
    cas_register,
    kv,
    linearizable,
    register,
)
from seedbed.check._history import Status


def op(f: str, value: Any = None, result: Any = None, *, known: bool = True) -> Operation:
    status: Status = "ok" if known else "info"
    return Operation(0, 0, f, value, result, status, 0, 1 if known else None)


def test_register_reads_the_last_write() -> None:
    model = register()
    assert model.init() is None
    assert model.step(None, op("write", 3)) == 3
    assert model.step(3, op("read", None, 3)) == 3
    assert model.step(3, op("read", None, 4)) is ILLEGAL
    assert model.step(None, op("read", None, None)) is None  # empty reads as nil
    assert model.step(3, op("read", known=False)) == 3  # unknown read: no effect
    assert register(initial=0).init() == 0


def test_cas_register_compares_then_sets() -> None:
    model = cas_register()
    assert model.step(1, op("cas", (1, 2), True)) == 2
    assert model.step(0, op("cas", (1, 2), True)) is ILLEGAL
    assert model.step(0, op("cas", (1, 2), False)) == 0  # saw another value
    assert model.step(1, op("cas", (1, 2), False)) is ILLEGAL
    assert model.step(1, op("cas", (1, 2), known=False)) == 2
    assert model.step(0, op("cas", (1, 2), known=False)) == 0
    assert model.step(0, op("write", 5)) == 5  # still a register


def test_kv_gets_puts_and_appends_one_key() -> None:
    model = kv()
    assert model.init() == ""
    assert model.step("", op("put", ("k", "ab"))) == "ab"
    assert model.step("ab", op("append", ("k", "c"))) == "abc"
    assert model.step("abc", op("get", ("k", None), ("k", "abc"))) == "abc"
    assert model.step("abc", op("get", ("k", None), ("k", "ab"))) is ILLEGAL
    assert model.step("", op("get", ("k", None), ("k", None))) == ""  # missing reads ""
    assert model.step("x", op("get", ("k", None), known=False)) == "x"


def test_kv_splits_by_key_in_order_of_first_appearance() -> None:
    ops = [op("put", ("b", "1")), op("put", ("a", "2")), op("get", ("b", None), ("b", "1"))]
    parts = kv().partition(ops)
    assert [label for label, _ in parts] == ["b", "a"]
    assert [len(part) for _, part in parts] == [2, 1]


@pytest.mark.parametrize(
    ("model", "operation"),
    [
        (register(), op("cas", (1, 2), True)),
        (cas_register(), op("cas", 5, True)),
        (cas_register(), op("cas", (1, 2), "yes")),
        (kv(), op("put", ("k", 5))),
        (kv(), op("incr", ("k", "1"))),
    ],
)
def test_operations_outside_the_model_are_rejected(model: Model, operation: Operation) -> None:
    with pytest.raises(ModelError):
        model.step(model.init(), operation)


class Counter:
    """A user-defined model: only the documented protocol, no fast path."""

    name = "counter"

    def init(self) -> int:
        return 0

    def step(self, state: int, op: Operation) -> Any:
        if op.f == "incr":
            return state + 1
        if op.f == "read":
            return state if not op.known or op.result == state else ILLEGAL
        return ILLEGAL

    def partition(self, ops: Sequence[Operation]) -> list[tuple[Hashable, list[Operation]]]:
        return [("all", list(ops))]

    def describe(self, op: Operation) -> str:
        return f"{op.f}() -> {op.result}"


def test_user_defined_models_follow_the_protocol() -> None:
    events = [
        Event(0, "invoke", "incr"),
        Event(1, "invoke", "incr"),
        Event(0, "ok", "incr"),
        Event(2, "invoke", "read"),
        Event(2, "ok", "read", 1),  # the other incr has not taken effect yet
        Event(1, "ok", "incr"),
        Event(2, "invoke", "read"),
        Event(2, "ok", "read", 2),
    ]
    assert isinstance(Counter(), Model)
    assert linearizable(History(events), Counter())
    stale = [*events, Event(2, "invoke", "read"), Event(2, "ok", "read", 1)]
    verdict = linearizable(History(stale), Counter())
    assert not verdict
    assert verdict.part == "all"
    assert "read() -> 1" in verdict.explain()
