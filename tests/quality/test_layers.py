"""Layers import only downward (DESIGN.md §1), and no cycle crosses packages.

The rules are the `layers` contract in pyproject.toml's `[tool.importlinter]`,
which CI checks with `lint-imports`; this is a second, dependency-free
reading of the same contract from the source (`import_graph`), which also
finds the cycles among the imports that run. Every `import` counts, the ones
inside functions too.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import import_graph as graph  # tests/quality is on sys.path under pytest's default import mode

LAYERS = graph.contract_layers()
SEEDBED = graph.read_graph()


def test_every_package_of_seedbed_has_a_layer() -> None:
    assert graph.unlayered(SEEDBED, LAYERS) == []


def test_no_import_points_up_or_across_independent_siblings() -> None:
    bad = [
        f"{imp.source}:{imp.line} ({imp.where}) imports {imp.target}"
        for imp in graph.upward(SEEDBED, LAYERS)
    ]
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_no_cycle_of_imports_crosses_packages() -> None:
    crossing = graph.crossing(graph.cycles(SEEDBED))
    assert not crossing, "cycles across packages:\n" + "\n".join(map(" ".join, crossing))


def test_the_layers_are_the_ones_design_md_names() -> None:
    names = [name for layer in LAYERS for name in layer.names]
    assert names == [
        "__main__", "cli", "pytest_plugin", "sweep", "_view", "_harness", "_lint", "scenario",
        "check", "services", "faults", "world", "net", "fs", "aio", "_core", "errors",
    ]  # fmt: skip


def _tree(tmp_path: Path, files: dict[str, str]) -> graph.Graph:
    for name, text in files.items():
        path = tmp_path / "seedbed" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return graph.read_graph(tmp_path)


def test_the_reading_finds_a_lazy_upward_import_and_a_cycle(tmp_path: Path) -> None:
    """The checks above can fail: a planted lazy import of `world` from `aio`
    is found as upward, and the cycle it closes as crossing packages."""
    planted = _tree(tmp_path, {
        "__init__.py": "",
        "aio/__init__.py": "",
        "aio/loop.py": "def node():\n    from seedbed.world import current_node\n",
        "world/__init__.py": "from seedbed.aio import loop\ncurrent_node = None\n",
    })  # fmt: skip
    (bad,) = graph.upward(planted, LAYERS)
    assert (bad.source, bad.target, bad.where) == ("seedbed.aio.loop", "seedbed.world", "function")
    assert graph.crossing(graph.cycles(planted)) == [["seedbed.aio.loop", "seedbed.world"]]


def test_the_reading_finds_an_import_of_the_facade_and_between_independent_siblings(
    tmp_path: Path,
) -> None:
    planted = _tree(tmp_path, {
        "__init__.py": "",
        "_harness/__init__.py": "import seedbed\n",
        "net/__init__.py": "from . import _pipe\n",
        "net/_pipe.py": "from seedbed.fs import DiskConfig\n",
        "fs/__init__.py": "DiskConfig = None\n",
    })  # fmt: skip
    found = {(imp.source, imp.target) for imp in graph.upward(planted, LAYERS)}
    assert found == {("seedbed._harness", "seedbed"), ("seedbed.net._pipe", "seedbed.fs")}


def test_imports_under_type_checking_do_not_make_cycles(tmp_path: Path) -> None:
    planted = _tree(tmp_path, {
        "__init__.py": "",
        "aio/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                           "    from seedbed._core import clock\n",
        "_core/__init__.py": "",
        "_core/clock.py": "from seedbed import aio\n",
    })  # fmt: skip
    assert graph.cycles(planted) == []
    where = {(imp.source, imp.where) for imp in planted.imports}
    assert ("seedbed.aio", "type-checking") in where


def test_nothing_outside_aio_touches_the_loops_private_state() -> None:
    """Worlds, scenarios and the layers above drive the loop only through its
    driver face (`loop.driver`, aio/_driver.py) and asyncio's public methods."""
    src = Path(graph.__file__).resolve().parents[2] / "src" / "seedbed"
    private = re.compile(r"\._st\b|\b_?loop\._(?!_)[a-z]\w*")
    found = [
        f"{path.relative_to(src)}:{number}: {line.strip()}"
        for path in sorted(src.rglob("*.py"))
        if path.relative_to(src).parts[0] != "aio"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if private.search(line)
    ]
    assert not found, "private loop state used outside aio:\n" + "\n".join(found)
