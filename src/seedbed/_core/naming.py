"""Naming a program so another process (or a person) can run it again.

A target is `package.module:function` or `path/to/file.py:function`; its
replay command is the `seedbed run` line that re-runs one seed of it with the
same options. Only strings here: this module is duck-typed (a scenario is
anything with `name`, `target` and `_module`) and imports nothing of seedbed,
so every layer that must print a replay command (the loop's runner, a
scenario's failure report, the harness) imports it downward. Resolving a
target and running it live in the harness (`seedbed._harness.targets`).

A replay command is only as good as its target, so `describe` refuses to
invent one for functions that cannot be imported by name (lambdas, nested
functions).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Modules imported from file targets are named with this prefix (see the
# harness's resolver), so their functions are named by file again.
FILE_MODULE_PREFIX = "_seedbed_target_"


def describe(func: Callable[..., Any]) -> str | None:
    """The target string that resolves back to `func`, or None if there is none."""
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
    return _target_in(module, qualname)


def _target_in(module: str, qualname: str) -> str | None:
    path = getattr(sys.modules.get(module), "__file__", None)
    by_file = module == "__main__" or module.startswith(FILE_MODULE_PREFIX)
    if by_file or (path and not _importable_by_name(module, path)):
        return f"{_relative(path)}:{qualname}" if path else None
    return f"{module}:{qualname}"


def _relative(path: str) -> str:
    return _relative_in(path, os.getcwd())


# Resolving paths costs two realpath walks of system calls; a scenario names
# its target once per seed (for the replay command), so the answers are kept
# per (path, working directory).
@functools.lru_cache(maxsize=256)
def _relative_in(path: str, cwd: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(cwd).resolve()))
    except ValueError:
        return path


def _importable_by_name(module: str, path: str) -> bool:
    """False for modules under the current directory whose dotted name does not
    match their path (pytest imports test files that way): name them by file."""
    return _importable_in(module, path, os.getcwd())


@functools.lru_cache(maxsize=256)
def _importable_in(module: str, path: str, cwd: str) -> bool:
    try:
        relative = Path(path).resolve().relative_to(Path(cwd).resolve())
    except ValueError:
        return True  # installed, or on sys.path some other way
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if parts and parts[0] == "src":
        parts.pop(0)
    return ".".join(parts) == module


# The run options that have a `seedbed run` flag: the budgets, then the loop's
# exploration options, which every plain program and Scenario takes.
RUN_FLAGS = {"max_steps": "--max-steps", "max_time": "--max-time", "strict": "--strict"}
RUN_FLAGS.update({"explore_tasks": "--explore-tasks", "clock_resolution": "--clock-resolution",
                  "strategy": "--strategy", "pct_depth": "--pct-depth",
                  "faults": "--faults", "disks": "--load-disks"})  # fmt: skip


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
    if target is None or any(name not in RUN_FLAGS for name in options):
        name = getattr(func, "__qualname__", repr(func))
        extra = "".join(f", {key}={value!r}" for key, value in options.items())
        return f"seedbed.run({name}, seed={seed}{extra})"
    return f"seedbed run {target} --seed {seed}{_flags(options)}"


# Boolean options that are on by default: what turns each off.
OFF_FLAGS = {"explore_tasks": "--no-explore-tasks"}


def _flags(options: dict[str, Any]) -> str:
    return "".join(_flag(key, value) for key, value in options.items())


def _flag(key: str, value: Any) -> str:
    """One option as the command line takes it: a switch is there or not
    (`--strict`, never `--strict False`, which click reads as a stray
    argument), an off value has its off switch or is the default and is left
    out, a value follows its flag, and an option left unset (None) is left out."""
    if value is None:
        return ""
    if value is True:
        return f" {RUN_FLAGS[key]}"
    if value is False:
        return f" {OFF_FLAGS[key]}" if key in OFF_FLAGS else ""
    return f" {RUN_FLAGS[key]} {shlex.quote(str(value))}"


def target_replay(target: str, seed: int, options: dict[str, Any] | None = None) -> str:
    """The `seedbed run` command for a target named as it was run (`module:name`),
    with the run options that differ from their defaults."""
    return f"seedbed run {target} --seed {seed}{_flags(options or {})}"


def describe_scenario(scenario: Any) -> str | None:
    """The target naming a module-level `Scenario` object, or None."""
    if getattr(scenario, "target", None):
        return str(scenario.target)
    module_name = getattr(scenario, "_module", None)
    module = sys.modules.get(module_name) if module_name else None
    if module is None:
        return None
    # A scenario names itself once per seed: the answer is kept on it while its
    # module still holds it under that name and the working directory is the same.
    cwd = os.getcwd()
    kept = getattr(scenario, "_described", None)
    if kept is not None and kept[0] == cwd and vars(module).get(kept[1]) is scenario:
        target: str | None = kept[2]
        return target
    for attr, value in vars(module).items():  # a module's namespace: definition order
        if value is scenario:
            target = _target_in(module.__name__, attr)
            with contextlib.suppress(AttributeError):  # an object that takes no attributes
                scenario._described = (cwd, attr, target)
            return target
    return None


def scenario_replay(scenario: Any, seed: int, options: dict[str, Any] | None = None) -> str:
    """The command that re-runs one seed of a scenario (with the same run options)."""
    options = options or {}
    target = describe_scenario(scenario)
    if target is None or any(name not in RUN_FLAGS for name in options):
        extra = "".join(f", {key}={value!r}" for key, value in options.items())
        return f"<Scenario {scenario.name!r}>.run(seed={seed}{extra})"
    return f"seedbed run {target} --seed {seed}{_flags(options)}"
