"""The set, queue and counter checks on random histories, against their definitions.

Two properties each:

- a history a correct system produced (every operation taking effect at one
  instant inside its interval, or never for a failed one and maybe never
  for one of unknown outcome) is valid, stale reads refused too;
- on any history, faulty ones included, the linear checker finds what the
  definition, computed here the slow and obvious way (every read against
  every element: quadratic), finds.

Histories are drawn as operations on a time line, each its own process, so
any overlap of intervals can occur.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seedbed.check import Event, History, Operation, check_counter, check_queue, check_set

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True)


@dataclass
class Planned:
    f: str
    value: Any
    start: float
    end: float
    status: str  # ok, fail, info
    effect: float | None  # when it took effect, if it did
    result: Any = None


def plan(rng: random.Random, functions: list[str], size: int) -> list[Planned]:
    """Operations on a time line: intervals, outcomes, and instants of effect."""
    out = []
    for number in range(size):
        f = rng.choice(functions)
        start = rng.uniform(0, 100)
        end = start + rng.uniform(0.1, 30)
        status = rng.choice(["ok", "ok", "ok", "info", "fail"])
        effect: float | None = rng.uniform(start, end)
        if status == "fail" or (status == "info" and rng.random() < 0.5):
            effect = None
        elif status == "info":
            effect = rng.uniform(start, start + 60)
        out.append(
            Planned(f, number if f in ("add", "enqueue") else None, start, end, status, effect)
        )
    return out


def to_history(planned: list[Planned]) -> History:
    points = []
    for process, op in enumerate(planned):
        value = op.value if op.f in ("add", "enqueue") else None
        points.append((op.start, process, Event(process, "invoke", op.f, value)))
        if op.status != "info":
            points.append((op.end, process, Event(process, op.status, op.f, op.result)))
    return History([event for _, _, event in sorted(points, key=lambda p: (p[0], p[1]))])


# --- set ---------------------------------------------------------------------------


def set_reads(planned: list[Planned]) -> None:
    """Each read returns what had taken effect at its own instant."""
    effective = [a for a in planned if a.f == "add" and a.effect is not None]
    for op in planned:
        if op.f == "read" and op.effect is not None:
            op.result = sorted(a.value for a in effective if a.effect < op.effect)  # type: ignore[operator]


def falsify_set(rng: random.Random, planned: list[Planned]) -> None:
    for op in planned:
        if op.f == "read" and isinstance(op.result, list) and rng.random() < 0.3:
            trick = rng.choice(["drop", "invent", "twice"])
            if trick == "drop" and op.result:
                op.result.remove(rng.choice(op.result))
            elif trick == "invent":
                op.result.append(rng.choice([99, *range(len(planned))]))
            elif op.result:
                op.result.append(op.result[0])


def set_outcomes_by_definition(history: History) -> dict[str, set[Any]]:
    """Jepsen's set-full, the obvious way: every element against every read."""
    ops = history.operations()
    adds = {op.value: op for op in ops if op.f == "add" and op.status != "fail"}
    reads = [op for op in ops if op.f == "read" and op.status == "ok"]
    out: dict[str, set[Any]] = {"lost": set(), "stale": set(), "never-read": set()}
    for element, add in adds.items():
        seen = [r for r in reads if element in r.result and r.ret >= add.call]  # type: ignore[operator]
        missed = [r for r in reads if element not in r.result]
        candidates = [r.ret for r in seen] + ([add.ret] if add.status == "ok" else [])
        known = min(candidates) if candidates else 1 << 62  # type: ignore[type-var]
        present = max((r.call for r in seen), default=-1)
        absent = max((r.call for r in missed), default=-1)
        if seen and absent < present:
            if absent >= 0 and known < absent:
                out["stale"].add(element)
        elif absent >= 0 and known < absent and present < absent:
            out["lost"].add(element)
        else:
            out["never-read"].add(element)
    return out


def found(verdict: Any, kind: str) -> set[Any]:
    return {f.subject for f in verdict.findings if f.kind == kind}


@SETTINGS
@given(st.integers(0, 2**32), st.integers(2, 16))
def test_a_correct_set_is_valid_even_for_linearizable_reads(seed: int, size: int) -> None:
    rng = random.Random(seed)
    planned = plan(rng, ["add", "add", "read"], size)
    set_reads(planned)
    verdict = check_set(to_history(planned), linearizable=True, allow_empty=True)
    assert verdict, verdict.explain()


@SETTINGS
@given(st.integers(0, 2**32), st.integers(2, 16))
def test_the_set_check_finds_what_the_definition_finds(seed: int, size: int) -> None:
    rng = random.Random(seed)
    planned = plan(rng, ["add", "add", "read"], size)
    set_reads(planned)
    falsify_set(rng, planned)
    history = to_history(planned)
    verdict = check_set(history, allow_empty=True)
    expected = set_outcomes_by_definition(history)
    for kind in ("lost", "stale", "never-read"):
        assert found(verdict, kind) == expected[kind], (kind, verdict.explain())
    invented = {
        e for op in history.operations() if op.f == "read" and op.status == "ok"
        for e in op.result if e not in {a.value for a in history.operations()
                                        if a.f == "add" and a.status != "fail" and a.call < op.ret}
    }  # fmt: skip
    assert found(verdict, "unexpected") == invented
    doubled = {e for op in history.operations() if op.f == "read" and op.status == "ok"
               for e, n in Counter(op.result).items() if n > 1}  # fmt: skip
    assert found(verdict, "duplicated") == doubled
    assert bool(verdict) == (not expected["lost"] and not invented and not doubled)


# --- queue ---------------------------------------------------------------------------


def queue_results(rng: random.Random, planned: list[Planned], faulty: bool) -> None:
    """Dequeues take, at their instants, the oldest element in effect; maybe misbehave."""
    events = sorted((op.effect, i) for i, op in enumerate(planned) if op.effect is not None)
    queue: list[int] = []
    for _, i in events:
        op = planned[i]
        if op.f == "enqueue":
            queue.append(op.value)
        else:
            op.result = queue.pop(0) if queue else None
            if faulty and op.result is not None and rng.random() < 0.2:
                queue.insert(0, op.result)  # handed out, and kept: a duplicate to come
    if planned and not faulty:
        planned.append(Planned("drain", None, 200.0, 201.0, "ok", 200.5, list(queue)))
    elif planned:
        planned.append(Planned("drain", None, 200.0, 201.0, "ok", 200.5, [*queue[1:], 77]))


@SETTINGS
@given(st.integers(0, 2**32), st.integers(1, 16), st.booleans())
def test_the_queue_check_counts_what_went_in_and_came_out(
    seed: int, size: int, faulty: bool
) -> None:
    rng = random.Random(seed)
    planned = plan(rng, ["enqueue", "dequeue"], size)
    queue_results(rng, planned, faulty)
    history = to_history(planned)
    verdict = check_queue(history, allow_empty=True)
    ops = history.operations()
    enqueues = [op for op in ops if op.f == "enqueue" and op.status != "fail"]
    attempted = Counter(op.value for op in enqueues)
    acked = Counter(op.value for op in enqueues if op.status == "ok")
    taken: Counter[Any] = Counter()
    ended: dict[Any, int] = {}  # the earliest end of a dequeue that took each element
    for op in ops:
        if op.status != "ok" or op.f == "enqueue":
            continue
        got = [op.result] if op.f == "dequeue" and op.result is not None else []
        for element in got if op.f == "dequeue" else op.result:
            taken[element] += 1
            ended[element] = min(ended.get(element, 1 << 62), op.ret)  # type: ignore[type-var]
    began = {e: min(op.call for op in enqueues if op.value == e) for e in attempted}
    invented = {e for e in taken if e not in began or ended[e] < began[e]}
    assert found(verdict, "unexpected") == invented
    assert found(verdict, "duplicated") == {
        e for e in taken if e not in invented and taken[e] > attempted[e]
    }
    assert found(verdict, "lost") == {e for e in acked if acked[e] > taken[e]}
    assert faulty or verdict


# --- counter ---------------------------------------------------------------------------


def counter_reads(rng: random.Random, planned: list[Planned], faulty: bool) -> None:
    for op in planned:
        if op.f == "add":
            op.value = rng.choice([1, 2, 5, -3])
    for op in planned:
        if op.f == "read" and op.effect is not None:
            op.result = sum(
                a.value for a in planned if a.f == "add" and a.effect is not None
                and a.effect < op.effect
            )  # fmt: skip
            if faulty and rng.random() < 0.3:
                op.result += rng.choice([-4, -1, 1, 6])


def bounds_by_definition(history: History, read: Operation) -> tuple[int, int]:
    ops = [op for op in history.operations() if op.f == "add" and op.status != "fail"]
    certain = [op.value for op in ops if op.status == "ok" and op.ret < read.call]  # type: ignore[operator]
    possible = [
        op.value for op in ops
        if op.call < read.ret and not (op.status == "ok" and op.ret < read.call)  # type: ignore[operator]
    ]  # fmt: skip
    low = sum(certain) + sum(v for v in possible if v < 0)
    return low, sum(certain) + sum(v for v in possible if v > 0)


@SETTINGS
@given(st.integers(0, 2**32), st.integers(1, 16), st.booleans())
def test_the_counter_check_holds_every_read_to_its_bounds(
    seed: int, size: int, faulty: bool
) -> None:
    rng = random.Random(seed)
    planned = plan(rng, ["add", "add", "read"], size)
    counter_reads(rng, planned, faulty)
    history = to_history(planned)
    verdict = check_counter(history, allow_empty=True)
    outside = set()
    for op in history.operations():
        if op.f == "read" and op.status == "ok":
            low, high = bounds_by_definition(history, op)
            if not low <= op.result <= high:
                outside.add(op.id)
    assert {f.ops[0].id for f in verdict.findings} == outside, verdict.explain()
    if not faulty:
        assert verdict, verdict.explain()
