"""The verdict on a transaction history: anomalies found, models ruled out.

`check_transactions` infers the dependency graph (`_txn_infer`), searches
it for cycles in three variants (data edges alone; plus process order; plus
real-time order, `_txn_cycles`) and maps the anomalies to the consistency
models they rule out, following Adya's definitions as Elle does:

- read uncommitted (PL-1): G0, garbage reads, duplicated appends,
  cyclic versions;
- read committed (PL-2): those, G1a, G1b, G1c, dirty updates,
  incompatible orders (a dirty read, per Elle), future reads (a G1c);
- repeatable read (PL-2.99): read committed's, G-single, G-nonadjacent,
  G2-item, and G2 (a cycle of two or more rw edges whose class the time
  budget left undecided): any cycle through an anti-dependency on items;
- snapshot isolation: read committed's, internal, G-single, G-nonadjacent
  (it allows only cycles with two adjacent rw edges: write skew);
- serializable (PL-3): repeatable read's and snapshot isolation's: any cycle;
- strong snapshot isolation: snapshot isolation's and the ``-process`` and
  ``-realtime`` forms of G0, G1c, G-single and G-nonadjacent;
- strict serializable: serializable's and every ``-process``/``-realtime`` form.

Our G2-item is a cycle with two adjacent rw edges (write skew, the one kind
snapshot isolation allows) and G-nonadjacent one whose rw edges are all
apart; Adya's G2-item includes both, and G-single, as Elle's does.

A cycle class is reported in its weakest form only: a G-single is not
reported again as G-single-realtime (which it implies).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from seedbed.check._history import History, note_check
from seedbed.check._linearizability import collector_paused
from seedbed.check._txn_append import infer_list_append
from seedbed.check._txn_cycles import BASE_CLASSES, CycleResult, CycleSearch, Step, classify
from seedbed.check._txn_history import (
    TxnHistory,
    TxnModel,
    check_unique_writes,
    txns_from_history,
)
from seedbed.check._txn_infer import KIND_NAMES, PROCESS, REALTIME, Anomaly, Inference, infer
from seedbed.check._txn_register import infer_rw_register
from seedbed.errors import UsageError

_RU: Final = frozenset({"G0", "garbage-read", "duplicate-append", "cyclic-versions"})
_RC: Final = _RU | {"G1a", "G1b", "G1c", "dirty-update", "incompatible-order", "future-read"}
_RR: Final = _RC | {"G-single", "G-nonadjacent", "G2-item", "G2"}
_SI: Final = _RC | {"internal", "G-single", "G-nonadjacent"}
_SER: Final = _RR | _SI

# What each history model's reads reveal (see `_txn_infer`), by model name.
READ_RULES: dict[str, Callable[[Inference], None]] = {
    "list-append": infer_list_append,
    "rw-register": infer_rw_register,
}


def _forms(names: Iterable[str]) -> frozenset[str]:
    return frozenset(f"{n}-{s}" for n in names for s in ("process", "realtime"))


PROHIBITED: Final = {
    "strict-serializable": _SER | _forms(BASE_CLASSES),
    "serializable": _SER,
    "strong-snapshot-isolation": _SI | _forms(("G0", "G1c", "G-single", "G-nonadjacent")),
    "snapshot-isolation": _SI,
    "repeatable-read": _RR,
    "read-committed": _RC,
    "read-uncommitted": _RU,
}
CONSISTENCY_MODELS: Final = tuple(PROHIBITED)
DEFAULT_SEARCH_SECONDS: Final = 2.0


class TxnOutcome(StrEnum):
    """Whether the history satisfies the consistency models asked about."""

    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"
    VACUOUS = "vacuous"  # no committed read: nothing could have shown an anomaly


@dataclass(frozen=True)
class TxnVerdict:
    """What `check_transactions` found.

    ``outcome`` concerns the models in ``consistency`` (invalid if any is
    ruled out, unknown if none is but one could not be decided);
    ``bool(verdict)`` is True only when valid. ``models`` maps every model to
    ``"ok"`` (not ruled out), ``"ruled-out"`` or ``"unknown"``.
    ``undecided`` names the cycle classes whose search ran out of time.
    ``anomalies`` are those that bear on the models asked for (as Elle
    reports them): a G-single-realtime says nothing about repeatable read.
    ``all_anomalies`` holds every one found, whatever it rules out.
    ``reason`` says why a vacuous history cannot show anything (no committed
    transaction read a key: every anomaly is inferred from reads).
    """

    outcome: TxnOutcome
    anomalies: tuple[Anomaly, ...]
    models: dict[str, str]
    consistency: tuple[str, ...]
    seconds: float
    transactions: int
    undecided: tuple[str, ...] = ()
    inference: Inference | None = field(default=None, repr=False, compare=False)
    all_anomalies: tuple[Anomaly, ...] = field(default=(), repr=False)
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.outcome is TxnOutcome.VALID

    def anomaly_names(self, *, every: bool = False) -> list[str]:
        """The distinct anomaly classes found, sorted: those bearing on the models
        asked for, or with ``every`` all of them."""
        return sorted({a.name for a in (self.all_anomalies if every else self.anomalies)})

    def explain(self, limit: int = 5) -> str:
        """The verdict, then each anomaly in words (``limit`` per class)."""
        wanted = ", ".join(self.consistency)
        if self.outcome is TxnOutcome.VACUOUS:
            return f"cannot show {wanted}: {self.reason} ({self.seconds:.3f} s)"
        lines = [
            f"{self.outcome} for {wanted} ({self.transactions} transactions, {self.seconds:.3f} s)"
        ]
        shown: dict[str, int] = {}
        for anomaly in self.anomalies:
            shown[anomaly.name] = shown.get(anomaly.name, 0) + 1
            if shown[anomaly.name] <= limit:
                lines.extend(_anomaly_lines(anomaly, self.inference))
        for name, count in shown.items():
            if count > limit:
                lines.append(f"{name}: {count - limit} more not shown")
        if self.undecided:
            lines.append("undecided (search out of time): " + ", ".join(self.undecided))
        for status in ("ruled-out", "unknown", "ok"):
            models = [m for m, s in self.models.items() if s == status]
            if models:
                label = {"ruled-out": "ruled out", "unknown": "undecided", "ok": "not ruled out"}
                lines.append(f"{label[status]}: {', '.join(models)}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object (anomalies with their explanations)."""
        return {
            "verdict": str(self.outcome),
            "reason": self.reason,
            "consistency": list(self.consistency),
            "anomalies": self.anomaly_names(),
            "all_anomalies": self.anomaly_names(every=True),
            "models": dict(self.models),
            "undecided": list(self.undecided),
            "transactions": self.transactions,
            "seconds": round(self.seconds, 6),
            "details": [a.to_json() for a in self.anomalies],
        }


def _anomaly_lines(anomaly: Anomaly, inference: Inference | None) -> list[str]:
    lines = [f"{anomaly.name}: {anomaly.text}"]
    if inference is not None and anomaly.steps:
        lines.extend(f"    {inference.history.txns[t].describe()}" for t in anomaly.txns)
        lines.extend(f"    {step}" for step in anomaly.steps)
    elif inference is not None:
        lines.extend(
            f"    {inference.history.txns[t].describe()}" for t in dict.fromkeys(anomaly.txns)
        )
    return lines


def check_transactions(
    history: TxnHistory | History,
    model: TxnModel = "list-append",
    *,
    consistency: str | Iterable[str] = "strict-serializable",
    realtime: bool = True,
    process: bool = True,
    timeout: float | None = None,
    search_seconds: float = DEFAULT_SEARCH_SECONDS,
    allow_empty: bool = False,
) -> TxnVerdict:
    """Check a transaction history against consistency models.

    ``history`` is a `TxnHistory` or a `History` of ``f="txn"`` operations
    (what the `Recorder` writes), read as ``model``. ``realtime`` and
    ``process`` add those edges (needed by the strong models). The search
    for short cycles stops after ``search_seconds`` per graph variant and at
    ``timeout`` (seconds of `time.monotonic`, so call it outside a
    simulation); anomalies whose existence is proved are reported either
    way, so only G-nonadjacent (and hence snapshot isolation) can stay
    undecided. Which cycle is shown for a class can depend on the budget.

    A history in which no committed transaction read anything is
    `TxnOutcome.VACUOUS` (every anomaly is inferred from reads, so none could
    show), unless ``allow_empty``: passing it would be a false green.
    """
    began = time.monotonic()
    wanted = (consistency,) if isinstance(consistency, str) else tuple(consistency)
    for name in wanted:
        if name not in PROHIBITED:
            raise UsageError(f"unknown consistency model {name!r}; known: {', '.join(PROHIBITED)}")
    with collector_paused():
        txns = history if isinstance(history, TxnHistory) else txns_from_history(history, model)
        if not allow_empty and not _any_committed_read(txns):
            check_unique_writes(txns)  # bad input stays bad input, vacuous or not
            return _vacuous(history, txns, wanted, time.monotonic() - began)
        inference = infer(txns, READ_RULES[txns.model], realtime=realtime, process=process)
        deadline = None if timeout is None else began + timeout
        cycles, undecided = _cycle_anomalies(inference, deadline, search_seconds, realtime, process)
    anomalies = list(inference.direct)
    anomalies.extend(cycles)
    models = _model_status({a.name for a in anomalies}, set(undecided))
    # An undecided class matters only where no other anomaly settled the model.
    open_models = [m for m, status in models.items() if status == "unknown"]
    undecided = [u for u in undecided if any(u in PROHIBITED[m] for m in open_models)]
    outcome = _outcome({models[m] for m in wanted})
    bearing = frozenset().union(*(PROHIBITED[m] for m in wanted))
    if "G-nonadjacent" in bearing:  # a G2 of undecided class may be a G-nonadjacent
        bearing |= {"G2"}
    relevant = tuple(a for a in anomalies if a.name in bearing)
    seconds = time.monotonic() - began
    verdict = TxnVerdict(
        outcome, relevant, models, wanted, seconds, len(txns), tuple(undecided), inference,
        all_anomalies=tuple(anomalies),
    )  # fmt: skip
    if outcome is TxnOutcome.INVALID and isinstance(history, History):
        blamed = (txns.txns[t].call for a in relevant if _rules_out(a, wanted) for t in a.txns)
        note_check(history, "transactions", verdict.explain, blamed)
    return verdict


def _any_committed_read(txns: TxnHistory) -> bool:
    return any(t.status == "ok" and any(m[0] == "r" for m in t.mops) for t in txns.txns)


def _vacuous(
    history: TxnHistory | History, txns: TxnHistory, wanted: tuple[str, ...], seconds: float
) -> TxnVerdict:
    committed = sum(1 for t in txns.txns if t.status == "ok")
    reason = (
        "no transaction committed" if not committed else "no committed transaction read a key"
    ) + ", so no anomaly could show"
    models = dict.fromkeys(PROHIBITED, "unknown")
    verdict = TxnVerdict(TxnOutcome.VACUOUS, (), models, wanted, seconds, len(txns), reason=reason)
    if isinstance(history, History):
        note_check(history, "transactions", verdict.explain, ())
    return verdict


def _rules_out(anomaly: Anomaly, wanted: tuple[str, ...]) -> bool:
    """Whether `anomaly` is one of those that refuse a consistency model asked about."""
    return any(anomaly.name in PROHIBITED[name] for name in wanted)


def _outcome(statuses: set[str]) -> TxnOutcome:
    if "ruled-out" in statuses:
        return TxnOutcome.INVALID
    return TxnOutcome.UNKNOWN if "unknown" in statuses else TxnOutcome.VALID


def _cycle_anomalies(
    inference: Inference, deadline: float | None, budget: float, realtime: bool, process: bool
) -> tuple[list[Anomaly], list[str]]:
    found: list[Anomaly] = []
    undecided: list[str] = []
    seen: set[str] = set()
    variants = [(0, "")]
    if process:
        variants.append((PROCESS, "-process"))
    if realtime:
        variants.append((REALTIME | (PROCESS if process else 0), "-realtime"))
    # Every variant's graph is a subgraph of the last one: its cycles lie in
    # that one's components, so on a valid history one pass of Tarjan is all.
    outer = CycleSearch(inference, variants[-1][0])
    within = outer.members()
    for extra, suffix in variants:
        now = time.monotonic()
        limit = now + budget if deadline is None else min(deadline, now + budget)
        search = outer if extra == variants[-1][0] else CycleSearch(inference, extra, within)
        results = search.run(frozenset(seen), limit)
        for base, result in results.items():
            if base in seen or result.status == "none":
                continue
            if result.status == "unknown":
                undecided.append(base + suffix)
                continue
            name = base + (_suffix(result.steps) if result.status == "found" else suffix)
            seen.add(base)
            found.append(_cycle_anomaly(inference, name, result))
    return found, undecided


def _suffix(steps: tuple[Step, ...]) -> str:
    """``-realtime`` or ``-process`` when the cycle needs such an edge."""
    name = classify(steps)
    return next((s for s in ("-realtime", "-process") if name.endswith(s)), "")


def _cycle_anomaly(inference: Inference, name: str, result: CycleResult) -> Anomaly:
    if result.status == "found":
        chain = " ".join(f"T{a} -{KIND_NAMES[k]}->" for a, _, k in result.steps)
        text = f"{chain} T{result.steps[0][0]} (a cycle of {len(result.steps)})"
        steps = tuple(inference.explain(a, b, k) for a, b, k in result.steps)
        return Anomaly(name, tuple(a for a, _, _ in result.steps), text, steps)
    size = result.component_size
    if result.steps:
        a, b, kind = result.steps[0]
        text = (
            f"exists: T{a} -{KIND_NAMES[kind]}-> T{b}, and T{b} reaches T{a} without an rw edge "
            f"(both in one component of {size} transactions); the cycle was not extracted in time"
        )
        return Anomaly(name, (a, b), text, (inference.explain(a, b, kind),), proved_only=True)
    text = (
        f"exists: a component of {size} transactions has cycles, none of them G0, G1c or "
        "G-single, so each has two or more rw edges; the cycle was not extracted in time"
    )
    return Anomaly(name, (), text, proved_only=True)


def _model_status(found: set[str], undecided: set[str]) -> dict[str, str]:
    status = {}
    for model, prohibited in PROHIBITED.items():
        if found & prohibited:
            status[model] = "ruled-out"
        elif undecided & prohibited:
            status[model] = "unknown"
        else:
            status[model] = "ok"
    return status
