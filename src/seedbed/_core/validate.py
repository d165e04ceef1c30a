"""Checks for the settings of the config dataclasses, shared so they agree.

Every config validates on construction, so a bad setting fails where it was
written, not deep inside a run. One wording for every config,
`Owner.name must be <what is allowed>, got <value>`, on one line, so the same
kind of setting is refused the same way wherever it appears.

A bool is never a number here: `True` is an `int` to Python, but never a
meaningful duration, probability or count.
"""

from __future__ import annotations

import math
from typing import NoReturn, TypeGuard

from seedbed.errors import UsageError


def check_seconds(owner: str, name: str, value: object, *, allow_zero: bool) -> None:
    """A duration: finite (infinity has no integer nanoseconds), >= 0 or > 0."""
    bound = ">= 0" if allow_zero else "> 0"
    if not (
        _is_number(value) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    ):
        _refuse(owner, name, value, f"a finite number of seconds {bound}")


def check_probability(owner: str, name: str, value: object) -> None:
    """A chance per event, 0 and 1 included (NaN fails the comparison)."""
    if not (_is_number(value) and 0 <= value <= 1):
        _refuse(owner, name, value, "a probability in [0, 1]")


def check_fraction(owner: str, name: str, value: object, *, below: float) -> None:
    """A fraction from 0 up to, not including, `below` (a rate error, say)."""
    if not (_is_number(value) and 0 <= value < below):
        _refuse(owner, name, value, f"a number in [0, {below})")


def check_positive_int(owner: str, name: str, value: object) -> None:
    """A count or a size: a whole number, at least 1 (a float is refused, even 512.0)."""
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        _refuse(owner, name, value, "an int >= 1")


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
    raise UsageError(f"{owner}.{name} must be {allowed}, got {value!r}")
