"""Lint source text and paths: parse, walk, apply the pragmas, sort.

Bad input is a `LintError` with one line naming the path and what to do (a
path that does not exist, a file that does not parse or decode); the command
turns it into exit code 2. Files are read in sorted path order and findings
are sorted by (path, line, column, code), so the output is the same on every
machine.
"""

from __future__ import annotations

import ast
import tokenize
from collections.abc import Iterable
from pathlib import Path

from seedbed._lint._checker import Checker, Finding
from seedbed._lint._pragma import pragmas
from seedbed._lint._rules import RULES
from seedbed.errors import UsageError

# Directories never linted when a directory is given: caches, virtual
# environments and version control (any name starting with a dot, too).
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "venv", "site-packages"})


class LintError(UsageError):
    """A path could not be linted (missing, unreadable, not Python)."""


def lint_source(text: str, filename: str = "<string>") -> list[Finding]:
    """Every finding in one module's source, pragmas applied, sorted."""
    try:
        tree = ast.parse(text, filename)
        marks = pragmas(text)
    except (SyntaxError, tokenize.TokenError) as exc:
        raise LintError(_parse_error(filename, exc)) from None
    lines = text.splitlines()
    raw: list[Finding] = []

    def emit(node: ast.AST, code: str, message: str) -> None:
        line = getattr(node, "lineno", 1)
        col = _column(lines, line, getattr(node, "col_offset", 0))
        raw.append(Finding(filename, line, col, code, message, RULES[code].fix))

    Checker(tree, emit).visit(tree)
    kept: list[Finding] = []
    used: set[int] = set()
    for finding in raw:
        mark = marks.get(finding.line)
        if mark is not None and mark.valid:
            used.add(finding.line)
        else:
            kept.append(finding)
    for line, mark in sorted(marks.items()):
        if not mark.valid:
            what = (f"pragma `seedbed: {mark.word}` is not understood" if mark.word != "allow"
                    else "pragma `seedbed: allow` gives no reason")  # fmt: skip
            kept.append(Finding(filename, line, mark.col, "SB501", what, RULES["SB501"].fix))
        elif line not in used:
            what = f"pragma `seedbed: allow {mark.reason}` suppresses nothing on this line"
            kept.append(Finding(filename, line, mark.col, "SB502", what, RULES["SB502"].fix))
    return sorted(set(kept))


def lint_paths(paths: Iterable[str | Path]) -> list[Finding]:
    """Every finding in the given files and directories (recursing into `*.py`)."""
    findings: list[Finding] = []
    for path in python_files(paths):
        findings.extend(lint_source(read_source(path), str(path)))
    return findings


def python_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files to lint, each once, in sorted order; LintError for a missing path."""
    found: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            inside = _walk(path)
            if not inside:
                raise LintError(f"{path}: no *.py files in this directory; name one that has some")
            found.update(inside)
        elif path.is_file():
            found.add(path)
        else:
            raise LintError(f"{path}: no such file or directory; name Python files or directories")
    return sorted(found)


def _walk(root: Path) -> list[Path]:
    """The `*.py` files under `root`, sorted; symlinked directories are not followed
    (a link back up would never end)."""
    try:
        entries = sorted(root.iterdir())
    except OSError as exc:
        raise LintError(f"{root}: cannot list it ({exc.strerror}); fix its permissions") from None
    files: list[Path] = []
    for path in entries:
        if path.is_dir() and not path.is_symlink():
            if not path.name.startswith(".") and path.name not in _SKIPPED_DIRS:
                files.extend(_walk(path))
        elif path.suffix == ".py" and path.is_file():
            files.append(path)
    return files


def read_source(path: Path) -> str:
    """A file's text (in its declared encoding); LintError if it cannot be read."""
    try:
        with tokenize.open(path) as file:  # honours a PEP 263 coding line
            return file.read()
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LintError(
            f"{path}: cannot read it ({reason}); fix the file or leave it out"
        ) from None


def _parse_error(filename: str, exc: SyntaxError | tokenize.TokenError) -> str:
    if isinstance(exc, SyntaxError):
        where = f"{filename}:{exc.lineno or 1}:{exc.offset or 1}"
        return f"{where}: cannot parse it ({exc.msg}); fix the syntax error or leave the file out"
    return f"{filename}: cannot parse it ({exc.args[0]}); fix the file or leave it out"


def _column(lines: list[str], line: int, byte_offset: int) -> int:
    """ast's column is a UTF-8 byte offset; the report's is a 1-based character column."""
    if 0 < line <= len(lines):
        return len(lines[line - 1].encode()[:byte_offset].decode(errors="ignore")) + 1
    return byte_offset + 1
