"""The one place the planted-bug tier states which options it runs with.

The tier's claim is "found with seedbed's defaults", so every system runs
with no options at all once exploration is on by default (issue 24 items 1
and 2). Until then DEFAULTS approximates those defaults explicitly: task
steps ready together in a drawn order, timers set within one 1 ms tick tie,
and the heavy-tailed latency model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import seedbed
from seedbed import NetworkConfig, Scenario, Simulation, SimulationFailure

# PURE-DEFAULTS: when main's "exploration on by default" lands, this line becomes
# `DEFAULTS: dict[str, Any] = {}` and the tier runs on seedbed's own defaults.
DEFAULTS: dict[str, Any] = {"explore_tasks": True, "clock_resolution": 0.001,
                            "network": NetworkConfig(latency_model="tail")}  # fmt: skip

# Set by bench/strategies.py to compare strategies on these systems; None: DEFAULTS.
OVERRIDE: dict[str, Any] | None = None


def options() -> dict[str, Any]:
    """World options (Simulation, Scenario): loop options and the network."""
    return dict(DEFAULTS if OVERRIDE is None else OVERRIDE)


def loop_options() -> dict[str, Any]:
    """Options for `seedbed.run`: the world options without the network."""
    return {key: value for key, value in options().items() if key != "network"}


def network(**settings: Any) -> NetworkConfig:
    """The network of `options()` with `settings` changed (a system's own topology)."""
    base = options().get("network") or NetworkConfig()
    return dataclasses.replace(base, **settings)


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
