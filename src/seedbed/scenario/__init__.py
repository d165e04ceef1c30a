"""Layer 5: scenarios: a world, the faults on it, its budget and its oracles, by seed."""

from seedbed.scenario._report import FailureReport
from seedbed.scenario._scenario import Scenario, ScenarioResult

__all__ = ["FailureReport", "Scenario", "ScenarioResult"]
