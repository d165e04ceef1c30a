"""seedbed: deterministic simulation testing for Python.

`(code, seed) -> identical execution -> identical result`. Ordinary asyncio
code runs on a deterministic event loop with virtual time, every choice drawn
from one seed, so a failure found under a seed replays bit for bit.
"""

from seedbed import fs, services
from seedbed._core.version import VERSION as __version__
from seedbed._harness.selfcheck import check_determinism
from seedbed.aio import (
    EventLoopPolicy,
    LoopConfig,
    RunResult,
    SeedbedLoop,
    checkpoint,
    new_event_loop,
    replay,
    run,
)
from seedbed.check import (
    always,
    coverage,
    eventually,
    leads_to,
    maximize,
    minimize,
    reachable,
    sometimes,
    unreachable,
)
from seedbed.errors import (
    BudgetExceeded,
    CancellationSwallowed,
    Deadlock,
    InvariantViolation,
    LivenessFailure,
    Nondeterminism,
    SeedbedError,
    SeedbedWarning,
    SimulatedFailure,
    SimulationEscape,
    SimulationFailure,
    SimulatorBug,
    UncaughtError,
    UsageError,
)
from seedbed.faults import FaultProfile, Swarm, buggify, failpoint, swarm
from seedbed.fs import DiskConfig
from seedbed.net import NetworkConfig
from seedbed.scenario import FailureReport, Scenario, ScenarioResult
from seedbed.world import ClockConfig, Simulation, SimulationResult, current_node

__all__ = [
    "BudgetExceeded",
    "CancellationSwallowed",
    "ClockConfig",
    "Deadlock",
    "DiskConfig",
    "EventLoopPolicy",
    "FailureReport",
    "FaultProfile",
    "InvariantViolation",
    "LivenessFailure",
    "LoopConfig",
    "NetworkConfig",
    "Nondeterminism",
    "RunResult",
    "Scenario",
    "ScenarioResult",
    "SeedbedError",
    "SeedbedLoop",
    "SeedbedWarning",
    "SimulatedFailure",
    "Simulation",
    "SimulationEscape",
    "SimulationFailure",
    "SimulationResult",
    "SimulatorBug",
    "Swarm",
    "UncaughtError",
    "UsageError",
    "__version__",
    "always",
    "buggify",
    "check_determinism",
    "checkpoint",
    "coverage",
    "current_node",
    "eventually",
    "failpoint",
    "fs",
    "leads_to",
    "maximize",
    "minimize",
    "new_event_loop",
    "reachable",
    "replay",
    "run",
    "services",
    "sometimes",
    "swarm",
    "unreachable",
]
