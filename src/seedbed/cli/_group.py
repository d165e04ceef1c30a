"""The `seedbed` group and what its commands share: the seed type, one-line errors.

Exit codes, the same for every command: 0 success, 1 a run failed (or a
replay diverged), 2 bad input, with a one-line message and no traceback.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import click

from seedbed._harness.targets import resolve
from seedbed.cli._guard import echo, safe_repr
from seedbed.errors import UsageError

SEED_HELP = "the seed: decimal or 0x-prefixed hex"


class _SeedType(click.ParamType):  # type: ignore[type-arg]
    """Seeds as people write them: 42 or 0xC0FFEE."""

    name = "seed"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value)
        # Python's int() reads other scripts' digits ("٣" is 3): a seed copied
        # from a log must mean one number everywhere, so ASCII only.
        seed = _ascii_int(text) if text.isascii() else None
        if seed is None:
            self.fail(
                f"{value!r} is not a seed: use ASCII digits like 42 or 007, or hex like 0xC0FFEE"
            )
        if seed < 0:
            self.fail(f"{value!r} is negative: seeds are non-negative integers")
        return seed


def _ascii_int(text: str) -> int | None:
    """What int() reads of ASCII text: 0x/0o/0b prefixes, and decimal with leading zeros."""
    for base in (0, 10):  # base 0 refuses "007"; base 10 reads it as 7
        try:
            return int(text, base)
        except ValueError:
            continue
    return None


class _FiniteFloat(click.ParamType):  # type: ignore[type-arg]
    """A positive, finite number of seconds: NaN and infinity are refused, not waited on."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds")
        if not math.isfinite(number) or number <= 0:
            self.fail(f"{value!r} must be a finite number of seconds above 0, like 30 or 2.5")
        return number


SEED = _SeedType()
SECONDS = _FiniteFloat()


def usage_error(message: str) -> None:
    """Print `error: message` on stderr and exit 2 (bad input)."""
    echo(f"error: {message}", err=True)
    sys.exit(2)


def resolve_or_exit(target: str) -> Callable[..., Any]:
    """The callable (or Scenario) TARGET names; a bad target exits 2 with one line."""
    try:
        return resolve(target)
    except UsageError as exc:
        usage_error(str(exc))
        raise  # unreachable: usage_error exits


def describe_value(value: Any) -> str:
    """A run's returned value for printing: cut short, and safe if its repr raises."""
    return safe_repr(value)


@click.group()
@click.version_option(package_name="seedbed")
def cli() -> None:
    """Deterministic simulation testing for Python."""
