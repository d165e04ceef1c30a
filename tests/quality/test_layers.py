"""Layers import only downward (DESIGN.md §1).

Read statically from the source (every `import`/`from ... import`, including
those inside functions), so a cycle hidden by import order still shows.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "seedbed"

# package -> seedbed packages it must never import
FORBIDDEN = {
    "_core": ("seedbed.aio", "seedbed.net", "seedbed.fs", "seedbed.world", "seedbed.check"),
    "net": ("seedbed.world", "seedbed.fs", "seedbed.check", "seedbed.scenario"),
    "fs": ("seedbed.world", "seedbed.net", "seedbed.check", "seedbed.scenario"),
    "check": ("seedbed.aio", "seedbed.net", "seedbed.fs", "seedbed.world"),
}

# Modules allowed to sit higher than their package's rule: the assertion
# oracles live in `check` (DESIGN.md §1, layer 4) but count into the running
# loop's catalog; the history checkers beside them stay standard-library only.
ABOVE_THE_RULE = {"check/_assertions.py"}


def _imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
    return found


def _modules(package: str) -> list[Path]:
    single = SRC / f"{package}.py"
    return [single] if single.exists() else sorted((SRC / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_only_downward(package: str) -> None:
    bad = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for path in _modules(package)
        if str(path.relative_to(SRC)) not in ABOVE_THE_RULE
        for line, name in _imports(path)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[package])
    ]
    assert not bad, "upward imports:\n" + "\n".join(bad)
