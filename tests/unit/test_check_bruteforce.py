"""The checker agrees with brute force on small random histories.

Histories come from a simulated concurrent execution: each operation is
invoked, may take effect on a true state at some later moment, and completes
with ``ok``, ``fail`` or ``info``, or stays open; some results are then
falsified, so both linearizable and non-linearizable histories are common.
The reference answer enumerates every order of the operations (with every
subset of the unknown-outcome ones) using its own sequential specification,
so it shares no code with the checker beyond the `Event` type.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedbed.check import Event, History, Outcome, cas_register, kv, linearizable

# --- the reference ----------------------------------------------------------------


@dataclass(frozen=True)
class RefOp:
    process: Any
    f: str
    value: Any
    result: Any
    known: bool
    call: int
    ret: float


def ref_operations(events: list[Event]) -> list[RefOp]:
    """Pair events independently; failed operations had no effect: drop them."""
    open_: dict[Any, tuple[int, Event]] = {}
    ops: list[RefOp] = []
    for i, e in enumerate(events):
        if e.type == "invoke":
            open_[e.process] = (i, e)
            continue
        call, inv = open_.pop(e.process)
        if e.type == "ok":
            ops.append(RefOp(e.process, inv.f, inv.value, e.value, True, call, i))
        elif e.type == "info":
            ops.append(RefOp(e.process, inv.f, inv.value, None, False, call, float("inf")))
    for call, inv in open_.values():
        ops.append(RefOp(inv.process, inv.f, inv.value, None, False, call, float("inf")))
    return ops


Spec = Callable[[Any, RefOp], tuple[bool, Any]]


def cas_spec(state: Any, op: RefOp) -> tuple[bool, Any]:
    if op.f == "write":
        return True, op.value
    if op.f == "read":
        return (not op.known or op.result == state), state
    expected, new = op.value
    matches = state == expected
    if not op.known:
        return True, new if matches else state
    return op.result == matches, new if matches else state


def kv_spec(state: Any, op: RefOp) -> tuple[bool, Any]:
    table = dict(state)
    key, arg = op.value
    if op.f == "get":
        return (not op.known or op.result == (key, table.get(key, ""))), state
    table[key] = arg if op.f == "put" else table.get(key, "") + arg
    return True, tuple(sorted(table.items()))


def legal(order: tuple[RefOp, ...], spec: Spec, init: Any) -> bool:
    for i, a in enumerate(order):  # real time: nothing after an op that ended before it began
        if any(b.ret < a.call for b in order[i + 1 :]):
            return False
    state = init
    for op in order:
        ok, state = spec(state, op)
        if not ok:
            return False
    return True


def brute_force(events: list[Event], spec: Spec, init: Any) -> bool:
    return brute_force_ops(ref_operations(events), spec, init)


def brute_force_ops(ops: list[RefOp], spec: Spec, init: Any) -> bool:
    """Whether some order of all known ops and some of the unknown ones is legal."""
    known = [op for op in ops if op.known]
    unknown = [op for op in ops if not op.known]
    for size in range(len(unknown) + 1):
        for chosen in itertools.combinations(unknown, size):
            for order in itertools.permutations(known + list(chosen)):
                if legal(order, spec, init):
                    return True
    return False


# --- the generator --------------------------------------------------------------


def cas_call(draw: st.DrawFn) -> tuple[str, Any]:
    f = draw(st.sampled_from(["read", "write", "cas"]))
    if f == "read":
        return f, None
    if f == "write":
        return f, draw(st.integers(0, 2))
    return f, (draw(st.integers(0, 2)), draw(st.integers(0, 2)))


def cas_apply(state: Any, f: str, value: Any) -> tuple[Any, Any]:
    """(result, new state) of really performing the call."""
    if f == "read":
        return state, state
    if f == "write":
        return value, value
    return (state == value[0]), (value[1] if state == value[0] else state)


def cas_lie(draw: st.DrawFn, f: str, value: Any) -> Any:
    if f == "cas":
        return draw(st.booleans())
    return draw(st.sampled_from([None, 0, 1, 2])) if f == "read" else value


def kv_call(draw: st.DrawFn) -> tuple[str, Any]:
    f = draw(st.sampled_from(["get", "put", "append"]))
    key = draw(st.sampled_from(["x", "y"]))
    return f, (key, None if f == "get" else draw(st.sampled_from(["a", "b"])))


def kv_apply(state: Any, f: str, value: Any) -> tuple[Any, Any]:
    key, arg = value
    table = dict(state)
    if f == "get":
        return (key, table.get(key, "")), state
    table[key] = arg if f == "put" else table.get(key, "") + arg
    return value, tuple(sorted(table.items()))


def kv_lie(draw: st.DrawFn, f: str, value: Any) -> Any:
    if f == "get":
        return (value[0], draw(st.sampled_from(["", "a", "b", "ab", "ba"])))
    return value


@st.composite
def histories(draw: st.DrawFn, call: Any, apply: Any, lie: Any, init: Any) -> list[Event]:
    """Events of a random concurrent run with true effects and a few lies."""
    processes = draw(st.integers(1, 4))
    budget = draw(st.integers(1, 7))
    state = init
    phase: dict[int, Any] = {}  # process -> (f, value, result-if-applied or marker)
    events: list[Event] = []
    pending = object()
    while True:
        idle = [p for p in range(processes) if p not in phase and budget > 0]
        busy = sorted(phase)
        if not idle and not busy:
            break
        if not idle and draw(st.integers(0, 9)) == 0:
            break  # stop with operations still open: unknown outcomes
        p = draw(st.sampled_from(idle + busy))
        if p not in phase:
            f, value = call(draw)
            budget -= 1
            phase[p] = (f, value, pending)
            events.append(Event(p, "invoke", f, value))
            continue
        f, value, result = phase[p]
        move = draw(st.sampled_from(["apply", "apply", "ok", "ok", "fail", "info"]))
        if move == "apply" and result is pending:
            result, state = apply(state, f, value)
            phase[p] = (f, value, result)
        elif move == "ok":
            if result is pending or draw(st.integers(0, 4)) == 0:
                result = lie(draw, f, value)  # never took effect, or a lie
            events.append(Event(p, "ok", f, result))
            del phase[p]
        elif move == "fail" and result is pending:
            events.append(Event(p, "fail", f, None))
            del phase[p]
        elif move == "info":
            events.append(Event(p, "info", f, None))
            del phase[p]
    return events


SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def check_against_brute_force(events: list[Event], model: Any, spec: Spec, init: Any) -> None:
    expected = brute_force(events, spec, init)
    verdict = linearizable(History(events), model, allow_empty=True)
    assert bool(verdict) == expected, (events, verdict.explain())
    guarded = linearizable(History(events), model)
    if guarded.outcome is Outcome.VACUOUS:  # called vacuous only where nothing could refuse it
        assert expected and not any(op.known and op.f in ("read", "get", "cas") for op in
                                    ref_operations(events))  # fmt: skip
    else:
        assert guarded.outcome is verdict.outcome
    if not expected:
        checked = {op.call for op in verdict.witness}
        assert verdict.witness_minimal  # tiny histories never run out of time
        assert checked, "a failure names at least one operation"
        assert not brute_force_ops(relaxed(events, checked), spec, init), "witness is orderable"
        for call in checked:
            assert brute_force_ops(relaxed(events, checked - {call}), spec, init), "not minimal"


def read_only(op: RefOp) -> bool:
    return op.f in ("read", "get") or (op.f == "cas" and op.result is False)


def relaxed(events: list[Event], checked: set[int]) -> list[RefOp]:
    """The ops with only those invoked at ``checked`` held to their observed outcome.

    Every other known op is forgotten down to its effect: read-only ones
    vanish, the rest may take effect within their interval or not at all.
    """
    out = []
    for op in ref_operations(events):
        if not op.known or op.call in checked:
            out.append(op)
        elif not read_only(op):
            out.append(RefOp(op.process, op.f, op.value, None, False, op.call, op.ret))
    return out


@SETTINGS
@given(histories(cas_call, cas_apply, cas_lie, None))
def test_cas_register_verdicts_match_brute_force(events: list[Event]) -> None:
    check_against_brute_force(events, cas_register(), cas_spec, None)


@SETTINGS
@given(histories(kv_call, kv_apply, kv_lie, ()))
def test_kv_verdicts_match_brute_force_across_keys(events: list[Event]) -> None:
    check_against_brute_force(events, kv(), kv_spec, ())


@SETTINGS
@given(histories(cas_call, cas_apply, cas_lie, None))
def test_a_linearizable_verdict_comes_with_a_legal_order(events: list[Event]) -> None:
    verdict = linearizable(History(events), cas_register())
    if verdict:
        ops = {(op.call, op.process): op for op in ref_operations(events)}
        order = tuple(ops[(op.call, op.process)] for op in verdict.order)
        assert {op for op in ops.values() if op.known} <= set(order)
        assert legal(order, cas_spec, None)
