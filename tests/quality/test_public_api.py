"""Every public module says what it exports, and that list is pinned here.

A public module is the facade `seedbed`, a top-level module or package
whose name has no leading underscore (`seedbed.sweep`, `seedbed.errors`,
`seedbed.check`, ...). Modules inside a package (`seedbed.aio.runner`) are
reached through their package's `__init__`, whose `__all__` is the face.
Adding a public name is a decision: make it here too. Without `__all__`,
`from seedbed.sweep import *` handed out `Callable`, `Iterable` and
`make_config`.
"""

from __future__ import annotations

import importlib
import typing
from collections import abc
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "seedbed"

PINNED = {
    "seedbed": [
        "BudgetExceeded", "CancellationSwallowed", "ClockConfig", "Deadlock", "DiskConfig",
        "EventLoopPolicy", "FailureReport", "FaultProfile", "InvariantViolation",
        "LivenessFailure", "LoopConfig", "NetworkConfig", "Nondeterminism", "RunResult",
        "Scenario", "ScenarioResult", "SeedbedError", "SeedbedLoop", "SeedbedWarning",
        "SimulatedFailure", "Simulation", "SimulationEscape", "SimulationFailure",
        "SimulationResult", "SimulatorBug", "UncaughtError", "UsageError", "__version__",
        "always", "buggify", "check_determinism", "checkpoint", "current_node", "failpoint",
        "fs", "new_event_loop", "reachable", "replay", "run", "sometimes", "unreachable",
        "coverage", "maximize", "minimize", "swarm", "Swarm", "eventually", "leads_to",
        "services",
    ],
    "seedbed.aio": [
        "EventLoopPolicy", "LoopConfig", "RunResult", "SeedbedLoop", "checkpoint",
        "new_event_loop", "replay", "run",
    ],
    "seedbed.check": [
        "Anomaly", "CONSISTENCY_MODELS", "CasRegister", "Event", "History", "HistoryError",
        "ILLEGAL", "KeyValue", "MODELS", "Model", "ModelError", "Operation", "Outcome",
        "PROHIBITED", "Recorder", "Register", "TXN_MODELS", "Txn", "TxnHistory", "TxnOutcome",
        "TxnVerdict", "Verdict", "always", "cas_register", "check_transactions",
        "detect_format", "kv", "linearizable", "parse_history", "parse_jepsen_log",
        "parse_jsonl", "parse_kv_log", "parse_txn_history", "reachable", "read_history",
        "read_jsonl", "read_txn_history", "register", "sometimes", "txns_from_history",
        "unreachable", "coverage", "maximize", "minimize", "eventually", "leads_to",
        "COLLECTION_MODELS", "CheckVerdict", "Finding", "HistoryOracle", "Validity",
        "check_collection", "check_counter", "check_queue", "check_set", "check_unique_ids",
        "parse_op_history", "read_op_history", "vacuous_reason",
    ],
    "seedbed.cli": ["SEED", "cli", "main"],
    "seedbed.errors": [
        "BudgetExceeded", "CancellationSwallowed", "Deadlock", "InvariantViolation",
        "LivenessFailure", "Nondeterminism", "RunContext", "SeedbedError", "SeedbedWarning",
        "SimulatedFailure", "SimulationEscape", "SimulationFailure", "SimulatorBug",
        "UncaughtError", "UsageError",
    ],
    "seedbed.faults": [
        "FaultProfile", "Nemesis", "SimulatedFailure", "Swarm", "buggify", "configure",
        "draw_swarm", "failpoint", "swarm",
    ],
    "seedbed.fs": [
        "DiskConfig", "FAULT_KINDS", "FaultCoordinator", "File", "SimDisk", "SimFile", "exists",
        "fsync_dir", "listdir", "mkdir", "open", "read_file", "remove", "rename", "rmdir",
        "write_file",
    ],
    "seedbed.net": ["NetworkConfig", "SimNetwork"],
    "seedbed.pytest_plugin": [
        "pytest_addoption", "pytest_collection_modifyitems", "pytest_configure",
        "pytest_generate_tests", "pytest_pyfunc_call", "pytest_report_header",
        "pytest_runtest_makereport", "seed", "seedbed_run",
    ],
    "seedbed.scenario": ["FailureReport", "Scenario", "ScenarioResult"],
    "seedbed.services": ["Nats", "NatsOptions", "Redis", "RedisOptions"],
    "seedbed.sweep": ["SeedFailure", "SweepResult", "summarize", "sweep"],
    "seedbed.world": ["ClockConfig", "Simulation", "SimulationResult", "current_node"],
}  # fmt: skip

# Names that are never a module's own export: typing helpers and ABCs.
_BORROWED = {*vars(typing), *vars(abc)} - {"__name__", "__doc__"}


def _public_modules() -> list[str]:
    found = ["seedbed"]
    for path in sorted(SRC.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        is_module = path.suffix == ".py" or (path / "__init__.py").exists()
        if is_module and not name.startswith("_"):
            found.append(f"seedbed.{name}")
    return found


def test_every_public_module_is_pinned() -> None:
    assert sorted(_public_modules()) == sorted(PINNED)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_public_module_exports_exactly_its_pinned_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert sorted(exported) == sorted(PINNED[name])
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"


@pytest.mark.parametrize("name", sorted(PINNED))
def test_every_exported_name_exists_and_is_not_a_typing_helper(name: str) -> None:
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    borrowed = [n for n in module.__all__ if n in _BORROWED]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"
    assert not borrowed, f"{name}.__all__ exports typing helpers: {borrowed}"
