"""Bounded temporal properties, checked while the run goes on, faults or not.

A liveness predicate is judged once every fault has stopped and the world is
healed. What a system promises while it is being hurt is a bound: "a new
leader within 5 s of losing one", "every request answered within 2 s".

- `eventually(predicate, within=S)`: the predicate is never false for more
  than S virtual seconds in a row.
- `leads_to(trigger, response, within=S)`: each returns a collection of
  keys; a key seen in the trigger's must appear in the response's within S
  seconds of when it was first seen (a request id sent, then answered).
  A key answered once is done: seen in the trigger again, it is no new
  obligation.

Both go in a Scenario's `invariants=` and are checked with the invariants
(after every step in which a node's code ran). The bound is judged at those
checks, in virtual time: nothing is scheduled to look at the deadline (a
timer of the oracle's own would change the run it watches), so a failure
says when the bound ran out and when the check saw it. Each run gets a fresh
checker (`start`), so one declaration serves every seed of a sweep. Which
overdue key is reported is fixed (the earliest first seen, then the
smallest `repr`), never the order of a set.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from seedbed._core.validate import check_seconds
from seedbed.errors import UsageError

_NS = 1_000_000_000


def _name(function: Callable[..., Any]) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


def _declared_at(depth: int) -> str:
    frame = sys._getframe(depth + 1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Temporal:
    """A declared temporal property: goes in `Scenario(invariants=[...])`."""

    __qualname__: str  # its name in reports and the assertion catalog (set per instance)

    def __init__(self, name: str, within: float, location: str) -> None:
        self.__qualname__ = name
        self.within = float(within)
        self.location = location

    def __repr__(self) -> str:
        return f"seedbed.{self.__qualname__}"

    def __call__(self) -> Any:
        raise UsageError(
            f"{self.__qualname__} is checked as a run goes: put it in a Scenario's "
            "invariants=[...], do not call it"
        )

    def start(self, now_ns: Callable[[], int]) -> Checker:
        """A checker for one run, reading that run's virtual time."""
        raise NotImplementedError


class Checker:
    """One run's checker: called like an invariant; raises AssertionError
    (the reason) once the bound is broken, returns True until then."""

    def __init__(self, declared: Temporal, now_ns: Callable[[], int]) -> None:
        self.__qualname__ = declared.__qualname__
        self.location = declared.location
        self._now = now_ns
        self._within_ns = round(declared.within * _NS)
        self._within = declared.within

    def __call__(self) -> bool:
        raise NotImplementedError


class _Eventually(Temporal):
    def __init__(self, predicate: Callable[[], Any], within: float, location: str) -> None:
        super().__init__(f"eventually({_name(predicate)}, within={within:g})", within, location)
        self.predicate = predicate

    def start(self, now_ns: Callable[[], int]) -> Checker:
        return _EventuallyChecker(self, now_ns)


class _EventuallyChecker(Checker):
    def __init__(self, declared: _Eventually, now_ns: Callable[[], int]) -> None:
        super().__init__(declared, now_ns)
        self._predicate = declared.predicate
        self._false_since: int | None = None

    def __call__(self) -> bool:
        try:
            holds, why = bool(self._predicate()), "it returned false"
        except AssertionError as exc:
            holds, why = False, str(exc) or "assertion failed"
        now = self._now()
        if holds:
            self._false_since = None
            return True
        if self._false_since is None:
            self._false_since = now
        if now - self._false_since <= self._within_ns:
            return True
        since = self._false_since
        raise AssertionError(
            f"false since t={since / _NS:.3f}s, past its bound of {self._within:g}s at "
            f"t={(since + self._within_ns) / _NS:.3f}s (seen at t={now / _NS:.3f}s; {why})"
        )


class _LeadsTo(Temporal):
    def __init__(self, trigger: Callable[[], Iterable[Any]],
                 response: Callable[[], Iterable[Any]], within: float,
                 location: str) -> None:  # fmt: skip
        name = f"leads_to({_name(trigger)}, {_name(response)}, within={within:g})"
        super().__init__(name, within, location)
        self.trigger, self.response = trigger, response

    def start(self, now_ns: Callable[[], int]) -> Checker:
        return _LeadsToChecker(self, now_ns)


class _LeadsToChecker(Checker):
    def __init__(self, declared: _LeadsTo, now_ns: Callable[[], int]) -> None:
        super().__init__(declared, now_ns)
        self._trigger, self._response = declared.trigger, declared.response
        self._pending: dict[Any, int] = {}  # key -> when first seen in the trigger's keys
        self._done: set[Any] = set()
        self._oldest: int | None = None  # the earliest first-seen time pending

    def __call__(self) -> bool:
        now = self._now()
        answered = _keys(self._response, "response")
        pending, done = self._pending, self._done
        for key in _keys(self._trigger, "trigger"):
            if key not in pending and key not in done:
                pending[key] = now
                if self._oldest is None:
                    self._oldest = now
        if pending and answered:
            for key in [key for key in pending if key in answered]:  # order-free: set ops
                del pending[key]
                done.add(key)
            self._oldest = min(pending.values()) if pending else None
        if self._oldest is None or now - self._oldest <= self._within_ns:
            return True
        since, key = min((seen, repr(key)) for key, seen in pending.items())
        more = len(pending) - 1
        raise AssertionError(
            f"key {key} entered {_name(self._trigger)} at t={since / _NS:.3f}s and was not in "
            f"{_name(self._response)} by t={(since + self._within_ns) / _NS:.3f}s "
            f"(bound {self._within:g}s; seen at t={now / _NS:.3f}s"
            + (f"; {more} more pending)" if more else ")")
        )


def _keys(function: Callable[[], Iterable[Any]], role: str) -> set[Any]:
    value = function()
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise UsageError(
            f"leads_to: the {role} {_name(function)} returned {type(value).__name__}, not a "
            "collection of keys (a set, list or dict of request ids, say)"
        )
    return value if isinstance(value, set | frozenset) else set(value)  # type: ignore[return-value]


def eventually(predicate: Callable[[], Any], *, within: float) -> Temporal:
    """The predicate is never false for more than `within` virtual seconds in a row.

    Put it in a Scenario's `invariants=`: checked with them as the run goes,
    faults on or not. Its failure is an `InvariantViolation` saying since when
    it was false and when the bound ran out.
    """
    if not callable(predicate):
        raise UsageError(f"eventually: the predicate must be a zero-argument callable, "
                         f"got {predicate!r}")  # fmt: skip
    check_seconds("eventually", "within", within, allow_zero=False)
    return _Eventually(predicate, within, _declared_at(1))


def leads_to(trigger: Callable[[], Iterable[Any]], response: Callable[[], Iterable[Any]],
             *, within: float) -> Temporal:  # fmt: skip
    """Every key `trigger()` returns appears in what `response()` returns within
    `within` virtual seconds of first being seen (each returns a collection of
    hashable keys, such as request ids sent and request ids answered).

    Put it in a Scenario's `invariants=`: checked with them as the run goes,
    faults on or not. Its failure names the earliest overdue key.
    """
    for role, function in (("trigger", trigger), ("response", response)):
        if not callable(function):
            raise UsageError(f"leads_to: the {role} must be a zero-argument callable "
                             f"returning keys, got {function!r}")  # fmt: skip
    check_seconds("leads_to", "within", within, allow_zero=False)
    return _LeadsTo(trigger, response, within, _declared_at(1))
