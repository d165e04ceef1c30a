"""Running one seed of a target in this process, whatever kind of target it is.

Every kind of target comes out as a `SeedOutcome`: a plain async program
through the loop's runner; a scenario adds its fault profile, fault
effectiveness and assertion catalog, and nothing else changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedbed._core import Trace
from seedbed._sweep._record import SeedOutcome
from seedbed.aio.runner import execute, make_config
from seedbed.errors import UsageError


def run_seed(
    target: Any, seed: int, options: dict[str, Any], trace_path: str | None = None
) -> SeedOutcome:
    """Run `target` under `seed`; a failed run is returned, not raised.

    `trace_path` keeps the run's events in that file (to find where two runs
    of a seed diverge). A `UsageError` (the target cannot run at all) raises.
    """
    config = make_config(options.get("max_steps"), options.get("max_time"),
                         {"strict": bool(options.get("strict"))})  # fmt: skip
    trace = Trace(keep=trace_path is not None)
    try:
        outcome = execute(target, seed, config, trace, Path(trace_path) if trace_path else None)
    except UsageError:
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt from inside the run
        return SeedOutcome(None, None, None, error=exc)
    result = outcome.result
    return SeedOutcome(
        result.trace_hash, result.steps, result.virtual_time, result.value, outcome.error
    )
