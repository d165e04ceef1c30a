"""The verdict of the collection checkers (set, queue, counter, unique ids).

Each of those checkers folds a history in one pass into *findings*: an
element lost, a read out of bounds, an id returned twice, each with the
operations that show it. Some findings refuse the history (a lost element),
others only inform (an element never read back). The verdict is

- ``valid``: nothing refused it, and it holds what the property needs to be
  shown (an add read back, a read after an acknowledged increment);
- ``invalid``: some finding refuses it;
- ``vacuous``: nothing refused it, but nothing could have: no operation of a
  kind the property needs succeeded. Passing such a history would be a false
  green (every checker "passes" a run in which the system never answered),
  so it does not pass unless the caller allows it (``allow_empty``).

Operations are named by their number and source lines, so a reader can find
them in the file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from seedbed.check._history import History, HistoryError, Operation, note_check

EXPLAIN_LIMIT = 8
"""Findings of each kind shown by `CheckVerdict.explain` (the count says how many more)."""


class Validity(StrEnum):
    """The three answers of a collection checker."""

    VALID = "valid"
    INVALID = "invalid"
    VACUOUS = "vacuous"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the checker found: its ``kind`` (``lost``, ``stale``...),
    the element or value concerned, the operations that show it, in
    invocation order, and a sentence; ``refutes`` when it refuses the history."""

    kind: str
    subject: Any
    ops: tuple[Operation, ...]
    text: str
    refutes: bool

    def to_json(self, history: History | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "subject": _jsonable(self.subject),
            "text": self.text,
            "operations": [describe_op(op, history) for op in self.ops],
        }


def _jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON can hold it; what it cannot (a map, NaN, an integer past
    the digit limit, nesting past 16 levels) as its repr, cut."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if value.bit_length() < 14_000 else shown(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else shown(value)
    if isinstance(value, tuple | list) and depth < 16:
        return [_jsonable(v, depth + 1) for v in value]
    return shown(value, 200)


def lines_of(op: Operation, history: History | None) -> str:
    """``lines 4-9``, ``line 4`` (no completion) or ``events 3-8`` (no source lines)."""
    if history is None or history[op.call].line is None:
        end = "end" if op.ret is None else str(op.ret)
        return f"events {op.call}-{end}"
    first = history[op.call].line
    last = None if op.ret is None else history[op.ret].line
    return f"line {first}" if last is None else f"lines {first}-{last}"


def describe_op(op: Operation, history: History | None = None) -> str:
    """``#12 p3 add(7) -> ok (lines 25-26)``: an operation a reader can find."""
    outcome = {"ok": f"ok {shown(op.result)}", "fail": "fail", "info": "?"}[op.status]
    if op.status == "ok" and (op.result is None or _same(op.result, op.value)):
        outcome = "ok"  # an acknowledgement echoing its argument says nothing more
    argument = "" if op.value is None else shown(op.value)
    process = f"p{op.process}" if isinstance(op.process, int) else shown(op.process, 30)
    return f"#{op.id} {process} {op.f}({argument}) -> {outcome} ({lines_of(op, history)})"


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a value whose comparison fails is shown, not compared
        return False


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit``; a value whose repr fails (an int past the
    interpreter's digit limit) is named by its type, never raised."""
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails still gets named
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class CheckVerdict:
    """What a collection checker found.

    ``counts`` are the tallies the checker keeps (attempted, acknowledged,
    lost...), in a fixed order; ``findings`` every finding, refuting ones
    first within each kind's order; ``reason`` says why a vacuous history
    cannot show the property (None otherwise). ``bool(verdict)`` is True only
    for a valid history.
    """

    model: str
    outcome: Validity
    counts: dict[str, int]
    findings: tuple[Finding, ...]
    seconds: float
    reason: str | None = None
    history: History | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.outcome is Validity.VALID

    def refuting(self) -> list[Finding]:
        """The findings that refuse the history."""
        return [f for f in self.findings if f.refutes]

    def kinds(self, *, refuting: bool = True) -> list[str]:
        """The kinds of finding present, in the order found (only refuting ones by default)."""
        return list(dict.fromkeys(f.kind for f in self.findings if f.refutes or not refuting))

    def headline(self) -> str:
        """The verdict in one line, without the time."""
        if self.outcome is Validity.VACUOUS:
            return f"cannot show the {self.model} property: {self.reason}"
        shown = ", ".join(f"{name} {count}" for name, count in self.counts.items())
        kinds = self.kinds()
        found = f" [{', '.join(kinds)}]" if kinds else ""
        return f"{self.outcome}{found}: {shown}"

    def explain(self, limit: int = EXPLAIN_LIMIT) -> str:
        """The headline, then each finding with its operations (``limit`` per kind)."""
        lines = [f"{self.headline()} ({self.seconds:.3f} s)"]
        shown: dict[str, int] = {}
        for finding in self.findings:
            shown[finding.kind] = shown.get(finding.kind, 0) + 1
            if shown[finding.kind] > limit:
                continue
            mark = "" if finding.refutes else " (not an error)"
            lines.append(f"{finding.kind}{mark}: {finding.text}")
            lines.extend(f"    {describe_op(op, self.history)}" for op in finding.ops)
        for kind, count in shown.items():
            if count > limit:
                lines.append(f"{kind}: {count - limit} more not shown")
        return "\n".join(lines)

    def to_json(self, limit: int = 100) -> dict[str, Any]:
        """The verdict as a JSON object (at most ``limit`` findings of each kind)."""
        findings: list[dict[str, Any]] = []
        shown: dict[str, int] = {}
        for finding in self.findings:
            shown[finding.kind] = shown.get(finding.kind, 0) + 1
            if shown[finding.kind] <= limit:
                findings.append(finding.to_json(self.history))
        return {
            "model": self.model,
            "verdict": str(self.outcome),
            "reason": self.reason,
            "counts": dict(self.counts),
            "refuted_by": self.kinds(),
            "seconds": round(self.seconds, 6),
            "findings": findings,
        }


def decide(
    model: str,
    history: History,
    counts: dict[str, int],
    findings: Sequence[Finding],
    reason: str | None,
    seconds: float,
    allow_empty: bool,
) -> CheckVerdict:
    """The verdict from what a checker found, noted for `seedbed view` when refused.

    ``reason`` is why the history cannot show the property (None when it
    can); it matters only when no finding refuses the history.
    """
    refuted = any(f.refutes for f in findings)
    if refuted:
        outcome = Validity.INVALID
    elif reason is not None and not allow_empty:
        outcome = Validity.VACUOUS
    else:
        outcome = Validity.VALID
    verdict = CheckVerdict(
        model, outcome, counts, tuple(findings), seconds,
        reason if outcome is Validity.VACUOUS else None, history,
    )  # fmt: skip
    if outcome is not Validity.VALID:
        blamed = (op.call for f in findings if f.refutes for op in f.ops)
        note_check(history, model, verdict.explain, blamed)
    return verdict


# --- the shape of operations ----------------------------------------------------


def refuse(history: History, op: Operation, reason: str) -> HistoryError:
    """A one-line error naming where ``op`` was read (its completion when it has one)."""
    event = history[op.ret] if op.ret is not None and op.status == "ok" else history[op.call]
    return HistoryError(history.source, event.line, reason)


def only(history: History, model: str, functions: Iterable[str]) -> None:
    """Refuse the first operation whose ``f`` is not one of the model's ``functions``."""
    allowed = tuple(functions)
    for op in history.operations():
        if op.f not in allowed:
            names = " and ".join(allowed) if len(allowed) < 3 else ", ".join(allowed)
            raise refuse(
                history,
                op,
                f"{model} model: operation {op.f!r} is not one of {names} (is --model right?)",
            )


def hashable(history: History, op: Operation, value: Any, what: str) -> Any:
    """``value`` if it can be compared and kept in a set, else a one-line refusal."""
    try:
        hash(value)
    except TypeError:
        raise refuse(history, op, f"{what} {shown(value)} cannot be compared (a map?)") from None
    return value


def elements(history: History, op: Operation, value: Any, model: str) -> tuple[Any, ...]:
    """What a read or drain returned, as a tuple: a list or set of elements (None: empty)."""
    if value is None:
        return ()
    if isinstance(value, frozenset):  # a set recorded in memory: its order is the hash's
        value = sorted(value, key=lambda v: (type(v).__name__, shown(v, 1000)))
    if isinstance(value, tuple | list):
        try:
            hash(tuple(value))  # every element at once, in C; the slow way only to name one
        except TypeError:
            for element in value:
                hashable(history, op, element, "element")
        return tuple(value)
    raise refuse(
        history, op, f"{model} model: {op.f} must return a list of elements, not {shown(value)}"
    )


def integer(history: History, op: Operation, value: Any, what: str) -> int:
    """``value`` as an integer (booleans refused), else a one-line refusal."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise refuse(history, op, f"{what} must be an integer, not {shown(value)}")
    return value
