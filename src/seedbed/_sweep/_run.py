"""Running one seed of a target in this process, whatever kind of target it is.

Every kind of target (an async main, a `Scenario`, a function that builds a
`Simulation`) runs through `run_target`, the one runner that `seedbed run`,
sweeps, check-determinism and the pytest plugin share, and comes out as a
`SeedOutcome`. A scenario adds its fault profile, fault effectiveness and
assertion catalog; nothing else changes.
"""

from __future__ import annotations

from typing import Any

from seedbed._sweep._record import SeedOutcome
from seedbed._target import run_target
from seedbed.errors import UsageError


def run_seed(
    target: Any, seed: int, options: dict[str, Any], trace_path: str | None = None
) -> SeedOutcome:
    """Run `target` under `seed`; a failed run is returned, not raised.

    `trace_path` keeps the run's events in that file (to find where two runs
    of a seed diverge). A `UsageError` (the target cannot run at all) raises.
    """
    given = {key: value for key, value in options.items() if value not in (None, False)}
    if trace_path is not None:
        given["trace"] = trace_path
    try:
        outcome = run_target(target, seed, **given)
    except UsageError:
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt from inside the run
        return SeedOutcome(None, None, None, error=exc)
    return SeedOutcome(
        outcome.trace_hash, outcome.steps, outcome.virtual_time, outcome.value, outcome.error,
        outcome.profile, outcome.faults, outcome.assertions, location=outcome.location,
    )  # fmt: skip
