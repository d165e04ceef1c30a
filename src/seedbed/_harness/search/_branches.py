"""Optional branch coverage of chosen packages, through `sys.monitoring` (3.12+).

`seedbed explore --branches PKG` adds a feature per branch direction taken
in PKG's code: `branch: PKG/file.py:12->14` (the line of the branch and the
line it went to; paths from the package's folder, so a feature names the
same branch on every machine; a module is named by its file, `rare.py:12->14`;
the two ways of a one-line `a if c else b` add how far the jump went). Off
by default: the branch events cost the run time (docs/how-to/explore-coverage.md
has the measure).

How it stays cheap and per run: the tool listens to BRANCH events only. A
branch outside the chosen packages is disabled at its first event
(`sys.monitoring.DISABLE`), and so is a branch once both of its directions
were seen, so a hot loop pays for its branch at most twice. Disabling lasts
until `restart_events()`, which every run calls first: each run's features
are the branches that run took, whatever ran before it in the process (a
worker's earlier runs), so `--jobs` and Dask still find the same.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from types import CodeType
from typing import Any

from seedbed._core.choices import draws_so_far
from seedbed.errors import UsageError

_TOOL_NAME = "seedbed explore --branches"
_TOOLS = (1, 3, 4)  # COVERAGE_ID first; 3 and 4 are free for any tool


def check_available(packages: Sequence[str]) -> None:
    """A one-line `UsageError` unless branch coverage of `packages` can run here."""
    if not packages:
        return
    if sys.version_info < (3, 12):
        version = ".".join(map(str, sys.version_info[:3]))
        raise UsageError(
            f"--branches needs Python 3.12 or later (sys.monitoring); this is {version}"
        )
    for package in packages:
        roots(package)


def roots(package: str) -> list[Path]:
    """The folders (or the one file) holding `package`'s code."""
    try:
        spec = find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise UsageError(f"--branches {package}: no such importable package or module")
    if spec.submodule_search_locations:
        return [Path(p).resolve() for p in spec.submodule_search_locations]
    if spec.origin is None:
        raise UsageError(f"--branches {package}: it has no source files to cover")
    return [Path(spec.origin).resolve()]


class _Listener:
    """The BRANCH callback and what it saw in one run."""

    def __init__(self, packages: Sequence[str]) -> None:
        self.places: list[tuple[str, str]] = []  # (root prefix, the name features use)
        for package in packages:
            for root in roots(package):
                name = package if root.is_dir() else root.name
                self.places.append((str(root) + ("/" if root.is_dir() else ""), name))
        self.reached: dict[str, int] = {}  # feature -> draws made when first taken
        self._names: dict[CodeType, str | None] = {}
        self._lines: dict[CodeType, dict[int, int]] = {}
        self._seen: dict[tuple[CodeType, int], int] = {}  # a branch -> the first destination
        self.disable: Any = None

    def _name(self, code: CodeType) -> str | None:
        """The file as features name it, or None when outside the packages."""
        if code not in self._names:
            found = None
            for prefix, name in self.places:
                filename = code.co_filename
                if filename.startswith(prefix) or filename == prefix.rstrip("/"):
                    rest = filename[len(prefix) :] if prefix.endswith("/") else ""
                    found = f"{name}/{rest}" if rest else name
                    break
            self._names[code] = found
        return self._names[code]

    def _line(self, code: CodeType, offset: int) -> int:
        lines = self._lines.get(code)
        if lines is None:
            lines = {}
            for start, end, line in code.co_lines():
                for at in range(start, end, 2):
                    lines[at] = line if line is not None else 0
            self._lines[code] = lines
        return lines.get(offset, 0)

    def branch(self, code: CodeType, offset: int, destination: int) -> Any:
        name = self._name(code)
        if name is None:
            return self.disable
        key = (code, offset)
        first = self._seen.get(key)
        if first == destination:
            return None
        src, dst = self._line(code, offset), self._line(code, destination)
        # Both ways of `a if c else b` stay on one line: the jump's length tells them apart.
        way = f" (+{destination - offset})" if src == dst else ""
        self.reached.setdefault(f"branch: {name}:{src}->{dst}{way}", draws_so_far())
        if first is None:
            self._seen[key] = destination
            return None
        return self.disable  # both ways seen: this branch costs nothing more this run


@contextmanager
def branch_coverage(packages: Sequence[str]) -> Iterator[dict[str, int] | None]:
    """The branches taken inside, as features -> position; None when not asked for."""
    if not packages:
        yield None
        return
    check_available(packages)
    monitoring: Any = getattr(sys, "monitoring")  # noqa: B009 (3.12+, checked above)
    tool = _free_tool(monitoring)
    listener = _Listener(packages)
    listener.disable = monitoring.DISABLE
    monitoring.use_tool_id(tool, _TOOL_NAME)
    try:
        monitoring.register_callback(tool, monitoring.events.BRANCH, listener.branch)
        monitoring.set_events(tool, monitoring.events.BRANCH)
        monitoring.restart_events()  # what an earlier run disabled fires again
        yield listener.reached
    finally:
        monitoring.set_events(tool, 0)
        monitoring.register_callback(tool, monitoring.events.BRANCH, None)
        monitoring.free_tool_id(tool)


def _free_tool(monitoring: Any) -> int:
    for tool in _TOOLS:
        if monitoring.get_tool(tool) is None:
            return int(tool)
    raise UsageError("--branches: every sys.monitoring tool id seedbed may use is taken "
                     "(a coverage or profiling tool runs here); run without it")  # fmt: skip
