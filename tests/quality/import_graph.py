"""seedbed's own import graph, read from the source: counts, cycles, upward imports.

A second reading of the layer order beside import-linter (`lint-imports`, run
by CI): this one has no dependency, prints numbers a person can compare
before and after a change, and also counts what import-linter does not look
at, the cycles among the imports that run.

Every `import` and `from ... import` is read, at module level and inside
functions (a lazy import runs too, just later). Imports under `if
TYPE_CHECKING:` never run: they are counted apart and left out of the cycles,
but they still must point downward (a type is a dependency too).

The layers are the `layers` contract in pyproject.toml's
`[tool.importlinter]`, so this reading and import-linter check one order.
The facade `seedbed/__init__.py` belongs to no layer there (import-linter
treats it as the container, whose imports it does not check); here it sits
just below the CLI and the pytest plugin, since importing it imports every
layer below them: no library module may import it.

Run it as a script for the numbers: `uv run python tests/quality/import_graph.py`.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PACKAGE = "seedbed"
FACADE_BELOW = "cli"  # the facade sits just below the layer holding this package


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported seedbed module
    line: int
    where: str  # "module", "function" or "type-checking"


@dataclass
class Graph:
    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_graph(src: Path = SRC) -> Graph:
    graph = Graph()
    for path in sorted((src / PACKAGE).rglob("*.py")):
        graph.modules[module_name(path, src)] = path
    for name, path in graph.modules.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for node, where in _walk(tree, "module"):
            for target in dict.fromkeys(_targets(node, name, is_package, graph.modules)):
                if target != name:
                    graph.imports.append(Import(name, target, node.lineno, where))
    return graph


def _walk(node: ast.AST, where: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, where
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, "type-checking" if where == "type-checking" else "function")
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), "type-checking")
            for stmt in child.orelse:
                yield from _walk(ast.Module(body=[stmt], type_ignores=[]), where)
        else:
            yield from _walk(child, where)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(
    node: ast.Import | ast.ImportFrom, name: str, is_package: bool, modules: dict[str, Path]
) -> list[str]:
    if isinstance(node, ast.Import):
        return [m for a in node.names if (m := _existing(a.name, modules))]
    base = node.module or ""
    if node.level:
        package = name.split(".") if is_package else name.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    found = []
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        target = submodule if submodule in modules else _existing(base, modules)
        if target:
            found.append(target)
    return found


def _existing(dotted: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of `dotted` that is a seedbed module (None: not ours)."""
    parts = dotted.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


# -- layers ----------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    names: tuple[str, ...]  # the packages or modules of seedbed in this layer
    independent: bool  # joined by `|`: neither may import the other


def contract_layers(pyproject: Path = ROOT / "pyproject.toml") -> list[Layer]:
    """The `layers` contract's layers, top first.

    Siblings joined by `|` are independent (neither imports the other), as in
    import-linter; siblings joined by `:` may import each other.
    """
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return [
        Layer(tuple(part.strip() for part in text.replace(":", "|").split("|")), "|" in text)
        for text in contract["layers"]
    ]


def package_of(module: str) -> str:
    """The first name under `seedbed` ("" for the facade itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_index(layers: list[Layer]) -> dict[str, float]:
    """Each package's rank, top 0; the facade between the CLI's layer and the next."""
    index: dict[str, float] = {}
    for rank, layer in enumerate(layers):
        for name in layer.names:
            index[name] = rank
    index[""] = index[FACADE_BELOW] + 0.5
    return index


def upward(graph: Graph, layers: list[Layer]) -> list[Import]:
    """Imports of a higher layer (a smaller rank), of an independent sibling, or
    of a package in no layer."""
    index = layer_index(layers)
    independent = {name for layer in layers if layer.independent for name in layer.names}
    bad = []
    for imp in graph.imports:
        source, target = package_of(imp.source), package_of(imp.target)
        if source == target:
            continue
        if (
            source not in index
            or target not in index
            or index[target] < index[source]
            or (index[target] == index[source] and source in independent)
        ):
            bad.append(imp)
    return bad


def unlayered(graph: Graph, layers: list[Layer]) -> list[str]:
    """Packages of seedbed that no layer names (the facade is placed apart)."""
    return sorted({package_of(m) for m in graph.modules} - set(layer_index(layers)))


# -- cycles -----------------------------------------------------------------------


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected groups of two or more modules, over the imports that run."""
    edges: dict[str, set[str]] = {m: set() for m in graph.modules}
    for imp in graph.imports:
        if imp.where != "type-checking":
            edges[imp.source].add(imp.target)
    return [sorted(group) for group in _components(edges) if len(group) > 1]


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (a module chain may be deep)."""
    counter = 0
    number: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(edges):
        if start in number:
            continue
        work = [(start, iter(sorted(edges[start])))]
        number[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == number[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    groups.append(group)
            elif child not in number:
                number[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on_stack:
                low[node] = min(low[node], number[child])
    return groups


def crossing(groups: list[list[str]]) -> list[list[str]]:
    """The cycles whose modules belong to more than one package."""
    return [g for g in groups if len({package_of(m) for m in g}) > 1]


def main() -> int:
    graph = read_graph()
    layers = contract_layers()
    counts = {where: sum(i.where == where for i in graph.imports)
              for where in ("module", "function", "type-checking")}  # fmt: skip
    groups = cycles(graph)
    across = crossing(groups)
    bad = upward(graph, layers)
    print(
        f"{len(graph.modules)} modules; seedbed imports: {counts['module']} module-level, "
        f"{counts['function']} function-level, {counts['type-checking']} type-checking"
    )
    print(f"cycles: {len(groups)} ({len(across)} crossing packages, "
          f"{sum(map(len, across))} modules in them)")  # fmt: skip
    for group in groups:
        print("  cycle: " + " ".join(group))
    print(f"upward imports: {len(bad)} ({sum(i.where == 'function' for i in bad)} lazy)")
    for imp in bad:
        print(f"  {imp.source}:{imp.line} ({imp.where}) imports {imp.target}")
    for name in unlayered(graph, layers):
        print(f"  in no layer: seedbed.{name}")
    return 1 if across or bad or unlayered(graph, layers) else 0


if __name__ == "__main__":
    sys.exit(main())
