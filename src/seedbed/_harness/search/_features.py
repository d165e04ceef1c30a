"""A run's coverage: the features it reached, read from what it recorded anyway.

A feature is a short string, one of:

- `sometimes: MSG`, `reachable: MSG`: the assertion was true at least once;
- `coverage: NAME=BUCKET`: a `seedbed.coverage` point;
- `buggify: WHY`, `failpoint: WHY`: the site fired (read from the run's
  recorded choices, so collecting them costs nothing in the run);
- `fault: KIND effective xN`: at least N (a power of two) faults of the
  class had an effect (the scenario's fault effectiveness counts).

`maximize`/`minimize` extremes are kept apart: a run that beats the best
value so far is kept in the corpus without being a new feature. The
*declared* features are those the run could have reached (a `sometimes`
evaluated but never true, a buggify site or failpoint reached that did not
fire, a fault class that was on): what a report lists as never reached.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from seedbed._core.choices import Choice
from seedbed.faults import _hooks
from seedbed.faults._hooks import RunHooks

_CLAIMS = ("sometimes", "reachable")
_FIRES = (("buggify fires: ", "buggify: "), ("failpoint: ", "failpoint: "))
_SITE = "buggify site enabled: "
_MAX_FAULT_BUCKET = 64


@dataclass
class Coverage:
    """What one run reached (`features`), could have reached (`declared`), and its extremes."""

    features: list[str] = field(default_factory=list)
    declared: list[str] = field(default_factory=list)
    extremes: dict[str, float] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)  # where in the draws each was reached
    times: dict[str, float] = field(default_factory=dict)  # and when (coverage points, extremes)


@contextmanager
def collecting() -> Iterator[list[RunHooks]]:
    """Every run's hook state made inside, for `coverage_of` to read afterwards."""
    made: list[RunHooks] = []
    previous = _hooks.collecting
    _hooks.collecting = made
    try:
        yield made
    finally:
        _hooks.collecting = previous


def coverage_of(hooks: Sequence[RunHooks], chosen: Sequence[Choice],
                faults: dict[str, Any] | None) -> Coverage:  # fmt: skip
    """The run's coverage, each list sorted (an order fixed by the strings)."""
    reached: dict[str, None] = {}
    declared: dict[str, None] = {}
    extremes: dict[str, float] = {}
    positions: dict[str, int] = {}
    times: dict[str, float] = {}
    for one in hooks:
        _from_catalog(one.catalog, reached, declared)
        for key, position in one.coverage.items():
            reached[f"coverage: {key}"] = None
            positions.setdefault(f"coverage: {key}", position)
            times.setdefault(f"coverage: {key}", one.times.get(key, 0.0))
        for key, (value, position) in one.extremes.items():
            if improves(key, value, extremes.get(key)):
                extremes[key], positions[key] = value, position
                times[key] = one.times.get(key, 0.0)
    _from_choices(chosen, reached, declared, positions)
    _from_faults(faults or {}, reached, declared)
    return Coverage(sorted(reached), sorted(declared), dict(sorted(extremes.items())),
                    dict(sorted(positions.items())), dict(sorted(times.items())))  # fmt: skip


def _from_catalog(catalog: dict[str, list[Any]], reached: dict[str, None],
                  declared: dict[str, None]) -> None:  # fmt: skip
    for message, (kind, _evaluated, true, _location) in catalog.items():
        if kind in _CLAIMS:
            declared[f"{kind}: {message}"] = None
            if true:
                reached[f"{kind}: {message}"] = None


def _from_choices(chosen: Sequence[Choice], reached: dict[str, None],
                  declared: dict[str, None], positions: dict[str, int]) -> None:  # fmt: skip
    for choice in chosen:
        reason = choice.reason
        if reason.startswith(_SITE):
            declared["buggify: " + reason[len(_SITE) :]] = None
            continue
        for prefix, name in _FIRES:
            if reason.startswith(prefix):
                feature = name + reason[len(prefix) :]
                declared[feature] = None
                if choice.value:
                    reached[feature] = None
                    positions.setdefault(feature, choice.order)


def _from_faults(faults: dict[str, Any], reached: dict[str, None],
                 declared: dict[str, None]) -> None:  # fmt: skip
    for kind, counts in faults.items():
        if not isinstance(counts, dict):
            continue
        declared[f"fault: {kind} effective x1"] = None
        effective = counts.get("effective", 0)
        bucket = 1
        while isinstance(effective, int) and bucket <= min(effective, _MAX_FAULT_BUCKET):
            reached[f"fault: {kind} effective x{bucket}"] = None
            bucket *= 2


def improves(key: str, value: float, best: float | None) -> bool:
    """Whether `value` of extreme `key` ('max NAME' / 'min NAME') beats `best`."""
    if best is None:
        return True
    return value > best if key.startswith("max ") else value < best
