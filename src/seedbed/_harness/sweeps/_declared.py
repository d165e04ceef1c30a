"""The `sometimes` claims a target's code declares, found by reading it.

A run's assertion catalog lists the calls that ran; a `sometimes` on a path
no seed reached never runs, so no seed lists it, and a sweep that reads only
its seeds' catalogs cannot say it was never true: the one claim that most
needs saying. This module reads the target's source instead (never imports
it): the target's file, then each module of the user's project it imports
(files under the current directory), for calls `sometimes(cond, "message")`
whose message is a plain string. What it finds is a catalog entry with no
evaluation, which the summary merges with the seeds'. (A `reachable` is
often written into the setup of one scenario among several in a module: a
sweep of another would call it never reached, so only `sometimes`, the
claim about the system itself, is read.)
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from seedbed._core.naming import FILE_MODULE_PREFIX

MAX_FILES = 200  # a project bigger than this is read only so far
_SEEDBED = Path(__file__).resolve().parents[2]  # seedbed's own claims are not the user's
_MESSAGE_ARG = {"sometimes": 1}  # the claims read, and where each call's message is


def declared(target: str) -> dict[str, dict[str, str]]:
    """message -> {"kind", "location"} for the `sometimes` claims the target's code makes."""
    module = target.rpartition(":")[0]
    first = Path(module) if module.endswith(".py") else _module_file(module)
    if first is None:
        return {}
    root = Path.cwd()
    found: dict[str, dict[str, str]] = {}
    queue, seen = [first.absolute()], set[Path]()
    while queue and len(seen) < MAX_FILES:
        path = queue.pop(0)
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        tree = _parse(path)
        if tree is None:
            continue
        for message, kind, line in _claims(tree):
            found.setdefault(message, {"kind": kind, "location": f"{_shown(path, root)}:{line}"})
        queue.extend(p for p in _imported(tree, path) if _inside(p, root) and p not in seen)
    return found


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _claims(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(message, kind, line) of each `sometimes`/`reachable` call with a literal message."""
    claims = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in _MESSAGE_ARG:
            continue
        message = _message(node, _MESSAGE_ARG[name])
        if message is not None:
            claims.append((message, name, node.lineno))
    return claims


def _message(call: ast.Call, position: int) -> str | None:
    given = [kw.value for kw in call.keywords if kw.arg == "message"]
    if not given and len(call.args) > position:
        given = [call.args[position]]
    if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
        return given[0].value
    return None


def _imported(tree: ast.Module, path: Path) -> list[Path]:
    """The files of the modules `tree` imports that can be found (relative ones too)."""
    files = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _relative_base(node, path) if node.level else (node.module or "")
            names = [base] + [f"{base}.{alias.name}" for alias in node.names if base]
        for name in names:
            found = _module_file(name) if name else None
            if found is not None:
                files.append(found.absolute())
    return files


def _relative_base(node: ast.ImportFrom, path: Path) -> str:
    """`from .x import y` in a/b.py: the dotted name of a.x, as seen from the cwd."""
    folder = path.parent
    for _ in range(node.level - 1):
        folder = folder.parent
    try:
        package = ".".join(folder.absolute().relative_to(Path.cwd()).parts)
    except ValueError:
        return ""
    return ".".join(part for part in (package, node.module or "") if part)


def _module_file(name: str) -> Path | None:
    """The file a dotted module name would load, looked for on the path without
    importing anything (a package's `__init__.py`)."""
    if name.startswith(FILE_MODULE_PREFIX) or name in sys.builtin_module_names:
        return None
    parts = name.split(".")
    for entry in [os.getcwd(), *sys.path]:
        base = Path(entry or ".").joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _inside(path: Path, root: Path) -> bool:
    """A file of the user's project: under the cwd, not in a virtual environment."""
    if path.resolve().is_relative_to(_SEEDBED):
        return False
    try:
        relative = path.relative_to(root)
    except ValueError:
        return False
    return not any(part.startswith(".") or part == "site-packages" for part in relative.parts)


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
