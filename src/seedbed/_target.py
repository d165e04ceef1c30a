"""Naming a program so another process (or a person) can run it again.

A target is `package.module:function` or `path/to/file.py:function`. A replay
command is only as good as its target, so `describe` refuses to invent one
for functions that cannot be imported by name (lambdas, nested functions).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed.errors import UsageError


def describe(func: Callable[..., Any]) -> str | None:
    """The target string that resolves back to `func`, or None if there is none."""
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    return _target_in(module, qualname)


def _target_in(module: str, qualname: str) -> str | None:
    path = getattr(sys.modules.get(module), "__file__", None)
    by_file = module == "__main__" or module.startswith(_FILE_MODULE_PREFIX)
    if by_file or (path and not _importable_by_name(module, path)):
        return f"{_relative(path)}:{qualname}" if path else None
    return f"{module}:{qualname}"


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def _importable_by_name(module: str, path: str) -> bool:
    """False for modules under the current directory whose dotted name does not
    match their path (pytest imports test files that way): name them by file."""
    try:
        relative = Path(path).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return True  # installed, or on sys.path some other way
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if parts and parts[0] == "src":
        parts.pop(0)
    return ".".join(parts) == module


_CLI_FLAGS = {"max_steps": "--max-steps", "max_time": "--max-time", "strict": "--strict"}
_EXPLORE_FLAGS = {"explore_tasks": "--explore-tasks", "clock_resolution": "--clock-resolution",
                  "strategy": "--strategy", "pct_depth": "--pct-depth"}  # fmt: skip
_CLI_FLAGS.update(_EXPLORE_FLAGS)  # loop options every plain program and Scenario takes


def replay_command(
    func: Callable[..., Any], seed: int, options: dict[str, Any] | None = None
) -> str:
    """The shell command that re-runs `func` under `seed` with the same run options.

    `options` holds the run options that differ from their defaults. Falls back
    to the Python call when `func` has no importable name or an option has no
    command-line flag.
    """
    options = options or {}
    target = describe(func)
    if target is None or any(name not in _CLI_FLAGS for name in options):
        name = getattr(func, "__qualname__", repr(func))
        extra = "".join(f", {key}={value!r}" for key, value in options.items())
        return f"seedbed.run({name}, seed={seed}{extra})"
    return f"seedbed run {target} --seed {seed}{_flags(options)}"


def _flags(options: dict[str, Any]) -> str:
    return "".join(
        f" {_CLI_FLAGS[key]}" if value is True else f" {_CLI_FLAGS[key]} {value}"
        for key, value in options.items()
    )


_FILE_MODULE_PREFIX = "_seedbed_target_"  # modules imported from file targets


def _import_file(path: Path) -> Any:
    name = f"{_FILE_MODULE_PREFIX}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def resolve(target: str) -> Callable[..., Any]:
    """Import the callable a target names; a bad target is a one-line `UsageError`."""
    module_part, sep, attr_path = target.rpartition(":")
    if not sep or not module_part or not attr_path:
        raise UsageError(
            f"target {target!r} is not of the form module:function or file.py:function"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the current project imports
    try:
        if module_part.endswith(".py"):
            obj: Any = _import_file(Path(module_part))
        else:
            obj = importlib.import_module(module_part)
    except UsageError:
        raise
    except SystemExit as exc:
        raise UsageError(
            f"importing {module_part!r} for target {target!r} called sys.exit({exc.code!r}): "
            "a target module must not exit when imported (put that under "
            "if __name__ == '__main__':)"
        ) from None
    except Exception as exc:
        raise UsageError(f"cannot import {module_part!r} for target {target!r}: {exc}") from None
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"target {target!r}: {module_part} has no {attr_path!r}") from None
    from seedbed.scenario import Scenario

    if isinstance(obj, Scenario):
        obj.target = target  # its replay command names it as it was found
        return obj  # type: ignore[return-value]
    if not callable(obj):
        raise UsageError(f"target {target!r} is neither a function nor a Scenario")
    return obj  # type: ignore[no-any-return]


# -- running one seed of any target ---------------------------------------------

DEFAULT_MAX_STEPS = 10_000_000  # a plain program's budget under `seedbed run`: about
DEFAULT_MAX_TIME = 3600.0  # half a minute of wall time, or a virtual hour


def describe_scenario(scenario: Any) -> str | None:
    """The target naming a module-level `Scenario` object, or None."""
    if getattr(scenario, "target", None):
        return str(scenario.target)
    module_name = getattr(scenario, "_module", None)
    module = sys.modules.get(module_name) if module_name else None
    if module is None:
        return None
    for attr, value in vars(module).items():  # a module's namespace: definition order
        if value is scenario:
            return _target_in(module.__name__, attr)
    return None


def scenario_replay(scenario: Any, seed: int, options: dict[str, Any] | None = None) -> str:
    """The command that re-runs one seed of a scenario (with the same run options)."""
    options = options or {}
    target = describe_scenario(scenario)
    if target is None or any(name not in _CLI_FLAGS for name in options):
        extra = "".join(f", {key}={value!r}" for key, value in options.items())
        return f"<Scenario {scenario.name!r}>.run(seed={seed}{extra})"
    return f"seedbed run {target} --seed {seed}{_flags(options)}"


@dataclass(frozen=True)
class TargetOutcome:
    """One seed of a target, passed or failed: what `run`, sweeps and the plugin report.

    `kind` is "program" (an async main), "scenario", or "simulation" (a plain
    function that builds and runs a `Simulation`). `profile`, `faults` and
    `assertions` are JSON-able (None where the kind has none).
    """

    kind: str
    seed: int
    value: Any
    error: BaseException | None
    trace_hash: str | None
    steps: int | None
    virtual_time: float | None
    replay: str
    profile: dict[str, Any] | None = None
    faults: dict[str, Any] | None = None
    assertions: dict[str, Any] | None = None
    location: str | None = None

    @property
    def result_digest(self) -> str | None:
        """A stable digest of the value returned (None for a failed run)."""
        from seedbed.aio._digest import result_digest

        return None if self.error is not None else result_digest(self.value)

    @property
    def status(self) -> str:
        return "pass" if self.error is None else "fail"

    def record(self) -> dict[str, Any]:
        """The fields of a sweep's per-seed line that a single run knows."""
        error = self.error
        message = str(error).splitlines()[0] if error is not None and str(error) else None
        return {
            "seed": self.seed,
            "status": self.status,
            "error_type": type(error).__name__ if error is not None else None,
            "message": message,
            "location": self.location,
            "replay": self.replay,
            "trace_hash": self.trace_hash,
            "steps": self.steps,
            "virtual_time": self.virtual_time,
            "profile": self.profile,
            "faults": self.faults,
            "assertions": self.assertions,
            "result_digest": self.result_digest,
        }


def run_target(obj: Any, seed: int, **options: Any) -> TargetOutcome:
    """Run one seed of a target: an async main, a `Scenario`, or a plain function
    `f(seed)` that builds and runs a `Simulation` (a zero-argument function
    returning a `Scenario` is run as that scenario).

    Options: `max_steps`, `max_time`, `strict` (budgets get defaults: a run
    always ends), `trace` (a path to write the run's events to). A failed run
    is returned in `error`; a bad target or option raises `UsageError`.
    """
    from seedbed.scenario import Scenario

    if isinstance(obj, Scenario):
        return _run_scenario(obj, seed, options)
    if not callable(obj):
        raise UsageError(f"a target must be a Scenario or a function, got {obj!r}")
    if inspect.iscoroutinefunction(obj) or not _takes_one_argument(obj):
        if not inspect.iscoroutinefunction(obj) and not _takes_one_argument(obj):
            made = _maybe_scenario_factory(obj)
            if made is not None:
                return _run_scenario(made, seed, options)
        return _run_program(obj, seed, options)
    return _run_simulation_function(obj, seed, options)


def _takes_one_argument(func: Callable[..., Any]) -> bool:
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [p for p in parameters if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]  # fmt: skip
    return len(required) == 1


def _maybe_scenario_factory(func: Callable[..., Any]) -> Any:
    """A zero-argument sync function returning a Scenario: that scenario, else None."""
    from seedbed.scenario import Scenario

    annotations = getattr(func, "__annotations__", {})
    if "Scenario" not in str(annotations.get("return", "")):
        return None
    made = func()
    return made if isinstance(made, Scenario) else None


def _split_options(options: dict[str, Any]) -> tuple[dict[str, Any], str | Path | None]:
    options = dict(options)
    trace = options.pop("trace", None)
    unknown = sorted(set(options) - set(_CLI_FLAGS))
    if unknown:
        raise UsageError(
            f"unknown run option {unknown[0]!r}; options are {', '.join(_CLI_FLAGS)}, trace"
        )
    kept = {key: value for key, value in options.items() if value is not None}
    if not kept.get("strict", True):
        del kept["strict"]  # the default
    return kept, trace


def _run_scenario(scenario: Any, seed: int, options: dict[str, Any]) -> TargetOutcome:
    overrides, trace = _split_options(options)
    result, error = scenario.execute(seed, trace=trace, overrides=overrides)
    if error is not None:
        report = error.report
        return TargetOutcome(
            "scenario", seed, None, error, None, report.step, report.virtual_time,
            report.replay, report.profile, report.faults, report.assertions, report.location,
        )  # fmt: skip
    return TargetOutcome(
        "scenario", seed, result.values, None, result.trace_hash, result.steps,
        result.virtual_time, scenario_replay(scenario, seed), result.profile, result.faults,
        result.assertions,
    )  # fmt: skip


def _run_program(main: Callable[..., Any], seed: int, options: dict[str, Any]) -> TargetOutcome:
    from seedbed._core import Trace
    from seedbed.aio.runner import execute, make_config

    budgets, trace = _split_options(options)
    max_steps = budgets.pop("max_steps", DEFAULT_MAX_STEPS)
    max_time = budgets.pop("max_time", DEFAULT_MAX_TIME)
    config = make_config(max_steps, max_time, budgets)
    outcome = execute(main, seed, config, Trace(keep=trace is not None), trace)
    error = outcome.error
    result = outcome.result
    # The default budgets are what `seedbed run` applies anyway: not repeated.
    replay = replay_command(main, seed, {k: v for k, v in options.items() if v and k != "trace"})
    _name_replay(error, replay)
    return TargetOutcome(
        "program", seed, result.value, error, result.trace_hash, result.steps,
        result.virtual_time, replay, location=_location(error),
    )  # fmt: skip


def _run_simulation_function(
    func: Callable[..., Any], seed: int, options: dict[str, Any]
) -> TargetOutcome:
    budgets, trace = _split_options(options)
    if budgets or trace is not None:
        raise UsageError(
            "a function that builds its own Simulation sets its own budgets and trace: "
            "pass them to Simulation(...) or run(max_time=...), or make it a Scenario"
        )
    target = describe(func)
    replay = f"seedbed run {target} --seed {seed}" if target else f"{func.__qualname__}({seed})"
    try:
        value = func(seed)
    except (UsageError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:
        _name_replay(error, replay)
        context = getattr(error, "context", None)
        steps = context.step if context is not None else None
        vt = context.virtual_time_ns / 1e9 if context is not None else None
        return TargetOutcome("simulation", seed, None, error, None, steps, vt, replay,
                             location=_location(error))  # fmt: skip
    return TargetOutcome(
        "simulation", seed, value, None, getattr(value, "trace_hash", None),
        getattr(value, "steps", None), getattr(value, "virtual_time", None), replay,
    )  # fmt: skip


def _name_replay(error: BaseException | None, replay: str) -> None:
    """Make the error's replay command the one for the target as it was run."""
    from seedbed.errors import SimulationFailure

    if isinstance(error, SimulationFailure) and error.context is not None:
        error.context = dataclasses.replace(error.context, replay=replay)
    elif error is not None:
        notes = getattr(error, "__notes__", [])
        for index, note in enumerate(notes):
            if note.startswith("  seed=") and "\n  replay: " in note:
                notes[index] = note.split("\n  replay: ")[0] + f"\n  replay: {replay}"


def _location(error: BaseException | None) -> str | None:
    if error is None:
        return None
    from seedbed.scenario._report import user_location

    return user_location(error)
