"""Running one plan of a search, in whichever process: its result as JSON data.

A fresh plan records its draws; a branch or mutation replays its source's
first draws and then draws afresh (`seedbed._core.branching`). Either way
the run's own choices come back in draw order, so a run kept in the corpus
or written as a failure replays exactly from its choice file. A run keeps
the collector off and leaves its garbage for later (`seedbed.aio._collect`):
after each run it goes once the heap has doubled, here, in whichever process
ran it, or a long search grows by what every run left (~150 KB a run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seedbed._core import entropy
from seedbed._core.branching import BranchSession
from seedbed._core.choices import Choice, ChoiceSession
from seedbed._harness.search._branches import branch_coverage
from seedbed._harness.search._features import collecting, coverage_of
from seedbed._harness.search._plan import Plan
from seedbed._harness.shrink._trial import failure_of
from seedbed._harness.targets import run_target
from seedbed.aio._collect import between_runs
from seedbed.errors import UsageError


def execute(obj: Any, plan: Plan, source: Sequence[Choice] | None, options: dict[str, Any],
            branches: Sequence[str] = ()) -> dict[str, Any]:  # fmt: skip
    """Run `plan` (replaying `source`, its parent's choices, for a branch); with
    `branches`, the branches it took in those packages are features too."""
    made: ChoiceSession = (
        ChoiceSession()
        if source is None
        else BranchSession(
            plan.source(list(source)),
            plan.prefix,
            plan.redraw_streams,
            plan.hotter or 1.0,
            plan.strike,
        )
    )
    given = {key: value for key, value in options.items() if value not in (None, False)}
    previous = entropy.choice_session
    entropy.choice_session = made
    try:
        with collecting() as hooks, branch_coverage(branches) as taken:
            try:
                outcome = run_target(obj, plan.seed, last_events=False, **given)
                error, steps, faults = outcome.error, outcome.steps, outcome.faults
                ran = {"trace_hash": outcome.trace_hash, "result_digest": outcome.result_digest}
            except UsageError:
                raise
            except Exception as exc:  # a failure outside the simulation proper
                error, steps, faults, ran = exc, None, None, {}
    finally:
        entropy.choice_session = previous
    between_runs()  # what the run left goes, amortized, as a sweep's worker does (`_collect`)
    chosen = list(made.choices)
    covered = coverage_of(hooks, chosen, faults)
    if taken:
        covered.features = sorted({*covered.features, *taken})
        covered.positions = dict(sorted({**taken, **covered.positions}.items()))
    return {
        "index": plan.index,
        "seed": plan.seed,
        "status": "pass" if error is None else "fail",
        "failure": failure_of(error),
        "steps": steps,
        "features": covered.features,
        "declared": covered.declared,
        "extremes": covered.extremes,
        "positions": covered.positions,
        "times": covered.times,
        "choices": [[c.stream, c.reason, c.value] for c in chosen],
        **ran,  # what a recheck compares (see `_recheck`)
    }


def choices_of(rows: Sequence[Sequence[Any]]) -> list[Choice]:
    """A result's choices (rows of [stream, reason, value], in draw order)."""
    return [Choice(str(stream), str(reason), value, order)
            for order, (stream, reason, value) in enumerate(rows)]  # fmt: skip
