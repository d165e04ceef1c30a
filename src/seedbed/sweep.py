"""Sweeps: one program, many seeds, every failure with the command that replays it.

This is the single-process sweep: seeds run one after another in this
process, each on a fresh loop, so a sweep's results are the same however it
is interrupted and resumed. Each failure keeps its seed, a one-line summary
and its replay command; nothing else about the run needs to be kept, since
the seed reproduces it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from seedbed._core import Trace
from seedbed._core.naming import replay_command
from seedbed.aio._collect import between_runs
from seedbed.aio.runner import RunOutcome, check_seed, execute, make_config

__all__ = ["SeedFailure", "SweepResult", "summarize", "sweep"]


@dataclass(frozen=True)
class SeedFailure:
    """One failing seed of a sweep."""

    seed: int
    error: str  # "Type: first line of the message"
    replay: str


@dataclass
class SweepResult:
    """What a sweep found."""

    seeds_run: int = 0
    failures: list[SeedFailure] = field(default_factory=list)

    @property
    def failed_seeds(self) -> list[int]:
        return [failure.seed for failure in self.failures]


def summarize(error: BaseException) -> str:
    """'Type: first line' of an error, for one-line reports."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def sweep(
    main: Callable[[], Any],
    seeds: Iterable[int],
    *,
    max_steps: int | None = None,
    max_time: float | None = None,
    on_seed: Callable[[int, RunOutcome], None] | None = None,
    **options: Any,
) -> SweepResult:
    """Run `main` once per seed; collect the failures instead of raising them.

    `on_seed(seed, outcome)` is called after each run (for progress displays).
    """
    config = make_config(max_steps, max_time, options)
    result = SweepResult()
    for seed in seeds:
        outcome = execute(main, check_seed(seed), config, Trace(), None)
        result.seeds_run += 1
        if outcome.error is not None:
            failure = SeedFailure(
                seed, summarize(outcome.error), replay_command(main, seed, config.changed())
            )
            result.failures.append(failure)
        if on_seed is not None:
            on_seed(seed, outcome)
        between_runs()  # what the runs leave goes as they go (see seedbed.aio._collect)
    return result
