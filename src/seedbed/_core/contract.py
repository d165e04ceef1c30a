"""Simulator contracts: the rules seedbed keeps for itself, checked as it runs.

A simulator that breaks its own rules (a clock that moves backwards, a pipe
that delivers more than was sent, a synced byte that changes) produces runs
that mean nothing, so every such rule is checked on both sides of the
contract that states it, TigerBeetle's way, and a broken one is a
`SimulatorBug`: a bug in seedbed, never in the user's program.

Checks are written `if not cond: broken("rule", detail=value)` where the
path is hot (no call when the rule holds) and `require(cond, "rule")`
elsewhere. The running loop registers a reporter, so the bug fails the run
with its seed, step and replay command even if user code around the call
that found it catches the exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from seedbed.errors import SimulatorBug

_reporter: Callable[[SimulatorBug], SimulatorBug] | None = None


def set_reporter(reporter: Callable[[SimulatorBug], SimulatorBug] | None) -> None:
    """The running loop's hook that stamps and records a bug (None: no run)."""
    global _reporter
    _reporter = reporter


def broken(rule: str, **details: Any) -> NoReturn:
    """Raise the `SimulatorBug` for a broken rule, recorded as the run's failure."""
    shown = ", ".join(f"{key}={value!r}" for key, value in details.items())
    bug = SimulatorBug(
        f"seedbed broke its own rule: {rule}"
        + (f" ({shown})" if shown else "")
        + "; please report it with the seed and replay command below"
    )
    if _reporter is not None:
        bug = _reporter(bug)
    raise bug


def require(condition: object, rule: str, **details: Any) -> None:
    """Check one rule off the hot path; see `broken`."""
    if not condition:
        broken(rule, **details)
