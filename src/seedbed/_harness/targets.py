"""Running targets by name: resolving a target string, running one seed of it.

Every kind of target (an async main, a `Scenario`, a function that builds a
`Simulation`) runs through `run_target`, the one runner that `seedbed run`,
sweeps, check-determinism, the shrinker and the pytest plugin share, and
comes out as a `SeedOutcome`. A scenario adds its fault profile, fault
effectiveness and assertion catalog; nothing else changes. Naming a target
(the strings) is `seedbed._core.naming`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import inspect
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seedbed._core import Trace
from seedbed._core.files import WriteFailed, writable
from seedbed._core.naming import (
    FILE_MODULE_PREFIX,
    RUN_FLAGS,
    describe,
    replay_command,
    scenario_replay,
    target_replay,
)
from seedbed._core.trace import recording
from seedbed._core.tracefile import write_trace
from seedbed._core.version import TRACE_FORMAT, VERSION
from seedbed._harness.failure import program_report, simulation_report
from seedbed._harness.outcome import SeedOutcome
from seedbed.aio._digest import result_digest
from seedbed.aio.runner import execute, failure_line, make_config
from seedbed.errors import SimulationFailure, UsageError, context_of, set_context
from seedbed.faults._hooks import catalogs, merged_assertions
from seedbed.scenario import Scenario
from seedbed.scenario._report import user_location
from seedbed.world._disks import loading


def _import_file(path: Path) -> Any:
    name = f"{FILE_MODULE_PREFIX}{path.stem}"
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
    if isinstance(obj, Scenario):
        obj.target = target  # its replay command names it as it was found
        return obj  # type: ignore[return-value]
    if not callable(obj):
        raise UsageError(f"target {target!r} is neither a function nor a Scenario")
    _check_arguments(target, obj)
    return obj  # type: ignore[no-any-return]


def _check_arguments(target: str, obj: Callable[..., Any]) -> None:
    """A target is called with no argument (an async main) or one (the seed):
    one that needs more is the user's mistake, said before any seed fails on it."""
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):  # a builtin or extension without a signature: try it
        return
    required = [
        p.name for p in parameters
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]  # fmt: skip
    if len(required) > 1:
        raise UsageError(
            f"target {target!r} needs {len(required)} arguments ({', '.join(required)}): a target "
            "takes none (async def main()) or the seed (def build(seed)); give the others defaults"
        )


DEFAULT_MAX_STEPS = 10_000_000  # a plain program's budget under `seedbed run`: about
DEFAULT_MAX_TIME = 3600.0  # half a minute of wall time, or a virtual hour


def run_target(
    obj: Any, seed: int, *, last_events: bool = True, target: str | None = None, **options: Any
) -> SeedOutcome:
    """Run one seed of a target: an async main, a `Scenario`, or a plain function
    `f(seed)` that builds and runs a `Simulation` (a zero-argument function
    returning a `Scenario` is run as that scenario).

    Options: `max_steps`, `max_time`, `strict` (budgets get defaults: a run
    always ends), `trace` (a path to write the run's events to). A failed run
    is returned in `error`, with its report in `report`; a bad target or
    option raises `UsageError`. Without `last_events`, a failure's report
    skips the second run that tells its story and last events (what a
    shrinker's many trials want). `target` is the name the target was run
    by (`module:name`): its replay command names it so.

    A `trace` path that is a symlink, FIFO or device is refused before the run
    (`UsageError`), and a trace the disk could not take raises `WriteFailed`
    (an `OSError`): the machine failed, not the run, whatever kind of target
    wrapped it as its own failure.
    """
    _check_trace_path(options.get("trace"))
    outcome = _dispatch(obj, seed, options, last_events, target)
    written = _write_failure(outcome.error)
    if written is not None:
        raise written
    return outcome


def _dispatch(
    obj: Any, seed: int, options: dict[str, Any], last_events: bool, target: str | None
) -> SeedOutcome:
    if isinstance(obj, Scenario):
        return _run_scenario(obj, seed, options, last_events)
    if not callable(obj):
        raise UsageError(f"a target must be a Scenario or a function, got {obj!r}")
    if options.get("faults") is not None:
        raise UsageError(
            "--faults swaps a Scenario's faults; this target is a plain function: "
            "give its Simulation the faults it should have, or make it a Scenario"
        )
    run = _Plain(obj, seed, target, last_events)
    if inspect.iscoroutinefunction(obj) or not _takes_one_argument(obj):
        if not inspect.iscoroutinefunction(obj) and not _takes_one_argument(obj):
            made = _maybe_scenario_factory(obj)
            if made is not None:
                return _run_scenario(made, seed, options, last_events)
        return run.program(options)
    return run.simulation_function(options)


def _check_trace_path(trace: str | Path | None) -> None:
    """Refuse, before anything runs, a trace path seedbed must not write into."""
    if trace is not None:
        writable(trace, "--trace")


def _write_failure(error: BaseException | None) -> WriteFailed | None:
    """The `WriteFailed` a run's error is, or was caused by (a scenario wraps it)."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, WriteFailed):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


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
    annotations = getattr(func, "__annotations__", {})
    if "Scenario" not in str(annotations.get("return", "")):
        return None
    made = func()
    return made if isinstance(made, Scenario) else None


def _split_options(options: dict[str, Any]) -> tuple[dict[str, Any], str | Path | None]:
    options = dict(options)
    trace = options.pop("trace", None)
    unknown = sorted(set(options) - set(RUN_FLAGS))
    if unknown:
        raise UsageError(
            f"unknown run option {unknown[0]!r}; options are {', '.join(RUN_FLAGS)}, trace"
        )
    kept = {key: value for key, value in options.items() if value is not None}
    if not kept.get("strict", True):
        del kept["strict"]  # the default
    return kept, trace


def _run_scenario(
    scenario: Scenario, seed: int, options: dict[str, Any], last_events: bool
) -> SeedOutcome:
    overrides, trace = _split_options(options)
    result, error = scenario.execute(
        seed, trace=trace, overrides=overrides, last_events=last_events
    )
    if error is not None:
        report = error.report
        if report is None:  # not a failure of the run's own making: no report
            replay = scenario_replay(scenario, seed)
            return SeedOutcome("scenario", seed, None, error, None, None, None, replay)
        return SeedOutcome(
            "scenario", seed, None, error, None, report.step, report.virtual_time,
            report.replay, report.profile, report.faults, report.assertions, report.location,
            report=report,
        )  # fmt: skip
    assert result is not None  # execute returns one of the two
    return SeedOutcome(
        "scenario", seed, result.values, None, result.trace_hash, result.steps,
        result.virtual_time, scenario_replay(scenario, seed), result.profile, result.faults,
        result.assertions,
    )  # fmt: skip


class _Plain:
    """One seed of a target that is not a Scenario: an async main or `f(seed)`."""

    def __init__(self, obj: Any, seed: int, target: str | None, last_events: bool) -> None:
        self.obj, self.seed, self.target, self.last_events = obj, seed, target, last_events

    def _replay(self, options: dict[str, Any], fallback: str) -> str:
        """The command that reruns this seed: by the name it was run as, if given."""
        if self.target is not None and all(key in RUN_FLAGS for key in options):
            return target_replay(self.target, self.seed, options)
        return fallback

    def program(self, options: dict[str, Any]) -> SeedOutcome:
        main, seed = self.obj, self.seed
        budgets, trace = _split_options(options)
        if budgets.pop("disks", None) is not None:
            raise UsageError(
                "--load-disks gives a world's nodes their saved disks; a plain program has "
                "no nodes: run a Scenario or a function that builds a Simulation"
            )
        max_steps = budgets.pop("max_steps", DEFAULT_MAX_STEPS)
        max_time = budgets.pop("max_time", DEFAULT_MAX_TIME)
        config = make_config(max_steps, max_time, budgets)
        with catalogs() as hooks:
            outcome = execute(main, seed, config, Trace(keep=trace is not None), trace)
        error = outcome.error
        result = outcome.result
        # The default budgets are what `seedbed run` applies anyway: not repeated.
        given = {k: v for k, v in options.items() if v is not None and k != "trace"}
        replay = self._replay(given, replay_command(main, seed, given))
        name_replay(error, replay)
        report = None
        if error is not None and self.last_events:
            report = program_report(main, seed, config, error, replay)
        return SeedOutcome(
            "program", seed, result.value, error, result.trace_hash, result.steps,
            result.virtual_time, replay, assertions=merged_assertions(hooks),
            location=_location(error), report=report,
        )  # fmt: skip

    def simulation_function(self, options: dict[str, Any]) -> SeedOutcome:
        func, seed = self.obj, self.seed
        budgets, trace = _split_options(options)
        disks = budgets.pop("disks", None)
        if budgets:
            raise UsageError(
                "a function that builds its own Simulation sets its own budgets: "
                "pass them to Simulation(...) or run(max_time=...), or make it a Scenario"
            )
        named = describe(func)
        given = {"disks": disks} if disks is not None else {}
        fallback = replay_command(func, seed, given) if named else f"{func.__qualname__}({seed})"
        replay = self._replay(given, fallback)
        if disks is not None:  # its own Simulation starts on them
            with loading(disks):
                return self._call(func, trace, replay)
        return self._call(func, trace, replay)

    def _call(self, func: Any, trace: str | Path | None, replay: str) -> SeedOutcome:
        seed = self.seed
        recorder: contextlib.AbstractContextManager[list[Trace]] = (
            recording() if trace is not None else contextlib.nullcontext([])
        )
        with recorder as traces, catalogs() as hooks:
            try:
                value = func(seed)
            except (UsageError, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as error:
                _write_recorded(trace, seed, traces, None, error)
                failed = self._failed_function(error, replay)
                failed.assertions = merged_assertions(hooks)
                return failed
        _write_recorded(trace, seed, traces, value, None)
        return SeedOutcome(
            "simulation", seed, value, None, getattr(value, "trace_hash", None),
            getattr(value, "steps", None), getattr(value, "virtual_time", None), replay,
            assertions=merged_assertions(hooks),
        )  # fmt: skip

    def _failed_function(self, error: BaseException, replay: str) -> SeedOutcome:
        name_replay(error, replay)
        context = context_of(error)
        steps = context.step if context is not None else None
        vt = context.virtual_time_ns / 1e9 if context is not None else None
        report = None
        if self.last_events:
            report = simulation_report(self.obj, self.seed, error, replay)
        return SeedOutcome("simulation", self.seed, None, error, None, steps, vt, replay,
                           location=_location(error), report=report)  # fmt: skip


def _write_recorded(
    path: str | Path | None,
    seed: int,
    traces: list[Trace],
    value: Any,
    error: BaseException | None,
) -> None:
    """Write what the function's own runs traced as one trace file (their events
    in order, their hashes joined), so two runs of a seed can be compared."""
    if path is None:
        return
    header = {"seedbed": VERSION, "format": TRACE_FORMAT, "python": platform.python_version(),
              "seed": seed, "options": {}, "kind": "simulation function",
              "runs": len(traces)}  # fmt: skip
    events = [event for trace in traces for event in trace.events or ()]
    end = {
        "end": len(events),
        "hash": ",".join(trace.hash for trace in traces),
        "failure": failure_line(error),
        "result": None if error is not None else result_digest(value),
    }
    write_trace(path, header, events, end)


def name_replay(error: BaseException | None, replay: str) -> None:
    """Make the error's replay command (and the view command drawn from it) the
    ones for the target as it was run."""
    context = context_of(error)
    if context is not None:
        context = dataclasses.replace(context, replay=replay)
        set_context(error, context)  # type: ignore[arg-type]
    if error is not None and not isinstance(error, SimulationFailure):
        notes = getattr(error, "__notes__", [])
        for index, note in enumerate(notes):
            if note.startswith("  seed=") and "\n  replay: " in note:
                notes[index] = (
                    context.describe()
                    if context is not None
                    else note.split("\n  replay: ")[0] + f"\n  replay: {replay}"
                )


def _location(error: BaseException | None) -> str | None:
    return None if error is None else user_location(error)


def run_seed(
    target: Any, seed: int, options: dict[str, Any], trace_path: str | None = None
) -> SeedOutcome:
    """Run `target` under `seed` as a sweep worker does: nothing escapes.

    Like `run_target`, and a run that tries to end the process (`sys.exit`,
    Ctrl-C from inside the run) is an "aborted" outcome, not an exit.
    `trace_path` keeps the run's events in that file (to find where two runs
    of a seed diverge). A `UsageError` (the target cannot run at all) raises.
    """
    given = {key: value for key, value in options.items() if value not in (None, False)}
    if trace_path is not None:
        given["trace"] = trace_path
    try:
        return run_target(target, seed, **given)
    except UsageError:
        raise
    except SystemExit as exc:  # the user's program tried to end the worker
        said = SystemExit(
            f"called sys.exit({exc.code!r}) inside the run: a simulated program returns "
            "or raises, it must not exit"
        )
        return SeedOutcome("aborted", seed, None, said, None, None, None, "")
    except BaseException as exc:  # KeyboardInterrupt from inside the run
        return SeedOutcome("aborted", seed, None, exc, None, None, None, "")
