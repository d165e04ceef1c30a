"""The one place the planted-bug tier states which options it runs with.

The tier's claim is "found with seedbed's defaults", so every system runs
with no options at all (issue 24 items 1 and 2: task steps ready together
in a drawn order, each cause's order kept; the time a timer is set read on
a 1 ms tick; the heavy-tailed latency model).
"""

from __future__ import annotations

from typing import Any

import seedbed
from seedbed import Scenario, Simulation, SimulationFailure

# Seedbed's own defaults: no option at all. (Before they were the defaults, this
# spelled them out; a system that needs an option to be found belongs elsewhere.)
DEFAULTS: dict[str, Any] = {}

# Set by bench/strategies.py to compare strategies on these systems; None: DEFAULTS.
OVERRIDE: dict[str, Any] | None = None


def options() -> dict[str, Any]:
    """World options (Simulation, Scenario): loop options and the network."""
    return dict(DEFAULTS if OVERRIDE is None else OVERRIDE)


def loop_options() -> dict[str, Any]:
    """Options for `seedbed.run`: the world options without the network."""
    return {key: value for key, value in options().items() if key != "network"}


def outcome(error: BaseException | None) -> str | None:
    """A failed run as one line (kind and message), None for a passing one."""
    if error is None:
        return None
    first = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {first}"


def run_program(main: Any, seed: int) -> str | None:
    """`seedbed.run(main)` under `seed` with the tier's options."""
    try:
        seedbed.run(main, seed=seed, **loop_options())
    except (AssertionError, SimulationFailure) as exc:
        return outcome(exc)
    return None


def run_world(sim: Simulation, max_time: float) -> str | None:
    """`sim.run(max_time)`; the failure as one line, or None."""
    try:
        sim.run(max_time=max_time)
    except (AssertionError, SimulationFailure) as exc:
        return outcome(exc)
    return None


def run_scenario(scenario: Scenario, seed: int) -> str | None:
    """One run of `scenario` under `seed` (its world options are the tier's)."""
    return outcome(scenario.execute(seed, last_events=False)[1])
