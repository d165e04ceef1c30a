"""What a name in the source means: `now` in `from time import time as now` is `time.time`.

Imports are collected from the whole file (those inside functions too, which
is where a lazy import puts them), so `t.monotonic()` after `import time as t`
resolves to `time.monotonic`, and `dt.datetime.now` after `import datetime as
dt` to `datetime.datetime.now`. A name no import binds resolves only if it is
a builtin the lint cares about (`id`, `hash`, `set`, `sorted`...) and the
module does not define it itself.
"""

from __future__ import annotations

import ast

_BUILTINS = frozenset(
    {
        "id", "hash", "set", "frozenset", "sorted", "min", "max", "sum", "any", "all", "len",
        "list", "tuple", "enumerate", "zip", "iter", "map", "filter", "next", "reversed",
        "str", "repr", "hex", "format", "print", "range", "int",
    }
)  # fmt: skip


class Names:
    """Resolves expressions to dotted, fully qualified names."""

    def __init__(self, tree: ast.Module) -> None:
        self._imported: dict[str, str] = {}
        self._own: set[str] = set()  # module-level names that shadow builtins
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._imported[alias.asname] = alias.name
                    else:  # `import os.path` binds `os`
                        root = alias.name.split(".")[0]
                        self._imported[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if alias.name != "*":
                        self._imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for stmt in tree.body:
            self._own.update(_defined_by(stmt))

    def qualname(self, node: ast.expr) -> str | None:
        """`a.b.c` as a dotted name with its root resolved through the imports, or None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self._imported.get(node.id)
        if root is None:
            if parts or node.id not in _BUILTINS or node.id in self._own:
                return None
            root = f"builtins.{node.id}"
        return ".".join([root, *reversed(parts)])


def _defined_by(stmt: ast.stmt) -> list[str]:
    """Names a module-level statement defines (so they are not the builtins)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]
