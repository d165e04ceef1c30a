"""The four exploration flags, added to `run`, `sweep` and `shrink` alike.

Their values become run options through `seedbed._harness.explore`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def explore_flags(command: F) -> F:
    """Add the four exploration flags and --faults to a click command."""
    flags = [
        click.option("--explore-tasks/--no-explore-tasks", default=None,
                     help="draw the order of task steps ready together from the seed"
                          "  [default: on]"),
        click.option("--clock-resolution", type=float, default=None, metavar="S",
                     help="timers read a clock of S-second ticks (0: exact)"
                          "  [default: 0.001]"),
        click.option("--strategy", default=None, metavar="random|pct",
                     help="how the loop picks what runs next  [default: random]"),
        click.option("--pct-depth", type=int, default=None, metavar="D",
                     help='with --strategy pct: the bug depth PCT targets  [default: 3]'),
        click.option("--faults", default=None, metavar="SPEC",
                     help="a Scenario's faults instead of its own: none, swarm, "
                          "swarm:only=A,B or swarm:exclude=A,B (fault class names)"),
    ]  # fmt: skip
    for flag in reversed(flags):
        command = flag(command)
    return command
