"""The exploration flags' values as run options, for `run`, `sweep` and `shrink`
(and `--faults`, which swaps a Scenario's fault pressure for a swarm spec).

Each flag is a `LoopConfig` field of the same name (`--explore-tasks` /
`--no-explore-tasks`,
`--clock-resolution S`, `--strategy random|pct`, `--pct-depth D`; the click
options are `seedbed.cli._explore`), checked with the shared validators
before anything runs, so a bad value is one line naming the flag.
"""

from __future__ import annotations

from typing import Any

from seedbed._core.validate import check_choice, check_positive_int, check_seconds
from seedbed.aio import LoopConfig
from seedbed.errors import UsageError
from seedbed.faults._swarm import parse_faults

STRATEGIES = ("random", "pct")


def explore_options(
    explore_tasks: bool | None,
    clock_resolution: float | None,
    strategy: str | None,
    pct_depth: int | None,
    faults: str | None = None,
) -> dict[str, Any]:
    """The flags given, as run options; a bad value is a one-line `UsageError`.
    `--faults` (a Scenario's pressure, see `seedbed.faults._swarm`) is kept as
    its spec, written back the way a replay command gives it."""
    options = {} if faults is None else {"faults": _faults_spec(faults)}
    try:
        return {**_checked(explore_tasks, clock_resolution, strategy, pct_depth), **options}
    except UsageError as exc:  # "LoopConfig.strategy must be ..." as the flag's name
        field, sep, rest = str(exc).partition(" must be ")
        if not sep:
            raise
        flag = "--" + field.rpartition(".")[2].replace("_", "-")
        raise UsageError(f"{flag} must be {rest}") from None


def _checked(
    explore_tasks: bool | None,
    clock_resolution: float | None,
    strategy: str | None,
    pct_depth: int | None,
) -> dict[str, Any]:
    options: dict[str, Any] = {}
    defaults = LoopConfig()
    if explore_tasks is not None and explore_tasks != defaults.explore_tasks:
        options["explore_tasks"] = explore_tasks  # --no-explore-tasks: on is the default
    if clock_resolution is not None:
        check_seconds("LoopConfig", "clock_resolution", clock_resolution, allow_zero=True)
        if clock_resolution != defaults.clock_resolution:
            options["clock_resolution"] = clock_resolution
    if strategy is not None:
        check_choice("LoopConfig", "strategy", strategy, STRATEGIES)
        if strategy != "random":
            options["strategy"] = strategy
    if pct_depth is not None:
        check_positive_int("LoopConfig", "pct_depth", pct_depth)
        if options.get("strategy") != "pct":
            raise UsageError(
                "--pct-depth applies only with --strategy pct: add it or drop --pct-depth"
            )
        options["pct_depth"] = pct_depth
    return options


def _faults_spec(text: str) -> str:
    parsed = parse_faults(text)
    return "none" if parsed is None else parsed.spec()
