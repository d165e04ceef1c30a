"""Continuous invariants and liveness predicates, checked by the loop's step hook;
and the checks run once at the end of a scenario run.

Invariants (bounded temporal properties too: `check._temporal`) are checked
after every loop iteration in which a node's code ran
(every `invariant_interval`-th such iteration, if set higher), so a failure
names the step and virtual time at which the property first broke. A false
invariant is recorded with the loop, which stops at the end of that
iteration. During the liveness phase the same hook checks whether every
liveness predicate has become true.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from seedbed._core.validate import shown
from seedbed.aio.loop import SeedbedLoop
from seedbed.check._temporal import Checker, Temporal
from seedbed.errors import InvariantViolation
from seedbed.scenario._report import user_location

Predicate = Callable[[], Any]


def name_of(predicate: Predicate) -> str:
    return getattr(predicate, "__qualname__", None) or repr(predicate)


def location_of(predicate: Predicate) -> str | None:
    if isinstance(predicate, Temporal | Checker):
        return predicate.location  # where `eventually(...)` or `leads_to(...)` was called
    code = getattr(predicate, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    where = getattr(predicate, "location", None)  # an object that says where it was made
    return where if isinstance(where, str) else None


def evaluate(predicate: Predicate) -> str | None:
    """None while the property holds; else why not (an AssertionError's message)."""
    try:
        holds = predicate()
    except AssertionError as exc:
        return str(exc) or "assertion failed"
    return None if holds else returned(holds, "a liveness predicate")


def returned(value: object, what: str) -> str:
    """Why a predicate that returned `value` does not hold, and what it must do: a
    bare "returned false" misleads when it returned None (a forgotten return)."""
    if value is False:
        return "returned False"
    try:
        text = shown(value)
    except Exception:  # a user's __repr__ that raises: say what type it was
        text = f"a {type(value).__name__}"
    return (
        f"returned {text}, not True: {what} must return True when it holds "
        "(or raise AssertionError with a message)"
    )


class Oracles:
    """The step hook of one scenario run."""

    def __init__(
        self,
        loop: SeedbedLoop,
        invariants: Sequence[Predicate],
        liveness: Sequence[Predicate],
        interval: int,
        checks: Sequence[Predicate] = (),
    ) -> None:
        self._loop = loop
        # A temporal property (`eventually`, `leads_to`) is checked by a checker of
        # this run's own, which reads its virtual time: its state is this run's.
        self._invariants: list[Predicate] = [
            p.start(lambda: loop.driver.now_ns) if isinstance(p, Temporal) else p
            for p in invariants
        ]
        self._declared = tuple(invariants)
        self._liveness = list(liveness)
        # The catalog's counts, one integer each and no trace event: every
        # invariant is evaluated in each round until one breaks (the hot path
        # counts rounds, not calls), every liveness predicate in each check.
        self._rounds = 0
        self._broken: int | None = None  # the invariant that broke, by position
        self._live_checks = 0
        self._live_true = [0] * len(self._liveness)
        self._interval = interval
        self._countdown = interval
        self._live: asyncio.Future[None] | None = None
        self._checks = tuple(checks)
        self._checks_true = 0  # the checks that passed: the first false one fails the run
        self._checks_run = 0

    def __call__(self) -> None:
        if self._invariants:
            self._countdown -= 1
            if self._countdown <= 0:
                self._countdown = self._interval
                self.check_invariants()
        if self._live is not None:
            self._check_liveness()

    def check_invariants(self) -> None:
        """Evaluate every invariant once; the first that breaks fails the run."""
        if not self._invariants:
            return
        self._rounds += 1
        for invariant in self._invariants:  # the hot path: no helper calls while all hold
            failure: Exception | None = None
            try:
                value = invariant()
                if value:
                    continue
                why = returned(value, "an invariant")
            except AssertionError as exc:
                why, failure = str(exc) or "assertion failed", exc
            except Exception as exc:  # an invariant that crashes is a broken invariant
                why, failure = f"raised {type(exc).__name__}: {exc}", exc
            self._broke(invariant, why, failure)
            return

    def _broke(self, invariant: Predicate, why: str, failure: Exception | None) -> None:
        error = InvariantViolation(f"invariant {name_of(invariant)} broke: {why}")
        error.assertion = f"invariant {name_of(invariant)}"  # its identity: not the why
        where = user_location(failure) if failure is not None else None
        error.location = where or location_of(invariant)  # type: ignore[attr-defined]
        if failure is not None:
            error.__cause__ = failure
        self._loop.trace.emit("invariant broke", name_of(invariant))
        self._broken = self._invariants.index(invariant)
        self._invariants = []  # the first break is the one reported
        self._loop.driver.fail(error)

    def run_checks(self) -> None:
        """Call each end-of-run check once; the first false one fails the run."""
        for check in self._checks:
            self._checks_run += 1
            failure: Exception | None = None
            try:
                value = check()
                if value:
                    self._checks_true += 1
                    continue
                why = returned(value, "a check")
            except AssertionError as exc:
                why, failure = str(exc) or "assertion failed", exc
            except Exception as exc:  # a check that crashes is a failed check
                why, failure = f"raised {type(exc).__name__}: {exc}", exc
            error = InvariantViolation(f"check {name_of(check)} failed: {why}")
            error.assertion = f"check {name_of(check)}"
            where = user_location(failure) if failure is not None else None
            error.location = where or location_of(check)  # type: ignore[attr-defined]
            if failure is not None:
                error.__cause__ = failure
            raise error

    def _check_liveness(self) -> None:
        live = self._live
        if live is not None and not live.done() and not self.still_false():
            live.set_result(None)

    def still_false(self) -> list[str]:
        """The liveness predicates that do not hold now, with why."""
        false = []
        self._live_checks += 1
        for index, predicate in enumerate(self._liveness):
            why = evaluate(predicate)
            if why is not None:
                false.append(f"{name_of(predicate)} ({why})")
            else:
                self._live_true[index] += 1
        return false

    def catalog(self) -> dict[str, dict[str, Any]]:
        """The invariants and liveness predicates as assertion-catalog entries
        (`RunHooks.assertions`' shape): 'invariant NAME' / 'liveness NAME' ->
        kind, times evaluated, times true, where declared."""
        entries: dict[str, dict[str, Any]] = {}
        for index, invariant in enumerate(self._declared):
            evaluated = true = self._rounds
            if self._broken is not None and index > self._broken:
                evaluated, true = evaluated - 1, true - 1  # not reached in the last round
            elif index == self._broken:
                true -= 1  # held in every round but its last
            entries[f"invariant {name_of(invariant)}"] = _entry(
                "invariant", evaluated, true, invariant
            )
        for predicate, true in zip(self._liveness, self._live_true, strict=True):
            entries[f"liveness {name_of(predicate)}"] = _entry(
                "liveness", self._live_checks, true, predicate
            )
        for index, check in enumerate(self._checks):
            ran = int(index < self._checks_run)
            entries[f"check {name_of(check)}"] = _entry(
                "check", ran, int(index < self._checks_true), check
            )
        return entries

    def liveness_reached(self) -> asyncio.Future[None]:
        """A future done once every liveness predicate holds at once."""
        self._live = self._loop.create_future()
        if not self.still_false():
            self._live.set_result(None)
        return self._live


def _entry(kind: str, evaluated: int, true: int, predicate: Predicate) -> dict[str, Any]:
    return {"kind": kind, "evaluated": evaluated, "true": true, "location": location_of(predicate)}
