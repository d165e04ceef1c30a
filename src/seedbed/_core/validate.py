"""Checks for the settings of the config dataclasses, shared so they agree.

Every config validates on construction, so a bad setting fails where it was
written, not deep inside a run. One wording for every config,
`Owner.name must be <what is allowed>, got <value>`, on one line, so the same
kind of setting is refused the same way wherever it appears.

A bool is never a number here: `True` is an `int` to Python, but never a
meaningful duration, probability or count.

Finite is not enough: a value must also be one the simulator can schedule.
Durations stop at `MAX_SECONDS` (virtual time is integer nanoseconds below
2**62, about 146 years; a setting must leave room for a run to use it), and
counts at `MAX_COUNT`, so `1e300` or `10**400` is refused where it is written
with the allowed range, instead of overflowing deep inside a run.
"""

from __future__ import annotations

import math
from typing import NoReturn, TypeGuard

from seedbed.errors import UsageError

MAX_SECONDS = 1e9  # about 31.7 years of virtual time
MAX_COUNT = 1 << 62
SEED_LIMIT = 1 << 64


def check_seed(seed: object) -> int:
    """A run's seed: a whole number in [0, 2**64), as every entry point takes it."""
    if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < SEED_LIMIT):
        shown = repr(seed) if not isinstance(seed, int) or seed < 10**30 else "a huge int"
        raise UsageError(f"seed must be a non-negative int below 2**64, got {shown}")
    return seed


def check_seconds(owner: str, name: str, value: object, *, allow_zero: bool) -> None:
    """A duration: finite (infinity has no integer nanoseconds), >= 0 or > 0."""
    low = "[0" if allow_zero else "(0"
    if not (
        _is_number(value)
        and (value >= 0 if allow_zero else value > 0)
        and value <= MAX_SECONDS  # before isfinite: 10**400 cannot become a float
        and math.isfinite(value)
    ):
        _refuse(owner, name, value, f"a number of seconds in {low}, {MAX_SECONDS:.0e}]")


def check_rate(owner: str, name: str, value: object) -> None:
    """Events per second: finite and >= 0 (0 turns them off)."""
    if not (_is_number(value) and 0 <= value <= MAX_SECONDS and math.isfinite(value)):
        _refuse(owner, name, value, f"a number of events per second in [0, {MAX_SECONDS:.0e}]")


def check_probability(owner: str, name: str, value: object) -> None:
    """A chance per event, 0 and 1 included (NaN fails the comparison)."""
    if not (_is_number(value) and 0 <= value <= 1):
        _refuse(owner, name, value, "a probability in [0, 1]")


def check_fraction(owner: str, name: str, value: object, *, below: float) -> None:
    """A fraction from 0 up to, not including, `below` (a rate error, say)."""
    if not (_is_number(value) and 0 <= value < below):
        _refuse(owner, name, value, f"a number in [0, {below})")


def check_positive_int(owner: str, name: str, value: object, *, maximum: int = MAX_COUNT) -> None:
    """A count or a size: a whole number, at least 1 (a float is refused, even 512.0)."""
    if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= maximum):
        limit = "2**62" if maximum == MAX_COUNT else str(maximum)
        _refuse(owner, name, value, f"an int in [1, {limit}]")


def check_bool(owner: str, name: str, value: object) -> None:
    """A switch: only `True` or `False`, so a stray 1 or "no" is not read as one."""
    if not isinstance(value, bool):
        _refuse(owner, name, value, "a bool")


def check_choice(owner: str, name: str, value: object, choices: tuple[str, ...]) -> None:
    """A named mode: one of a few strings, spelled exactly."""
    if not (isinstance(value, str) and value in choices):
        _refuse(owner, name, value, "one of " + ", ".join(repr(choice) for choice in choices))


def check_at_least(owner: str, name: str, value: float, floor_name: str, floor: float) -> None:
    """One setting bounded by another (a max by its min); both checked before."""
    if value < floor:
        _refuse(owner, name, value, f">= {floor_name} ({floor!r})")


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _refuse(owner: str, name: str, value: object, allowed: str) -> NoReturn:
    raise UsageError(f"{owner}.{name} must be {allowed}, got {shown(value)}")


def shown(value: object) -> str:
    """The value as written, short: a 400-digit int is not worth printing."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an int of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4000'} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
