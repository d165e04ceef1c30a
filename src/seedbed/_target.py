"""Naming a program so another process (or a person) can run it again.

A target is `package.module:function` or `path/to/file.py:function`. A replay
command is only as good as its target, so `describe` refuses to invent one
for functions that cannot be imported by name (lambdas, nested functions).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seedbed.errors import UsageError


def describe(func: Callable[..., Any]) -> str | None:
    """The target string that resolves back to `func`, or None if there is none."""
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        return None
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
    flags = "".join(
        f" {_CLI_FLAGS[key]}" if value is True else f" {_CLI_FLAGS[key]} {value}"
        for key, value in options.items()
    )
    return f"seedbed run {target} --seed {seed}{flags}"


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
    if not callable(obj):
        raise UsageError(f"target {target!r} is not callable")
    return obj  # type: ignore[no-any-return]
