"""What would write the real file system from inside a node unseen: refused.

The stand-ins (`_interpose`) serve every file call a node's Python code
makes through `open`, `os`, `pathlib`, `shutil` and `tempfile`, and never
call the real function that writes. So an audited write that still reaches
the real file system while a node's code runs came another way: C code
calling `_io`/`posix` directly, `sqlite3` on a file, a file-backed `mmap`.
Each raises the run's `SimulationEscape` naming the call (the audit hook of
`seedbed.aio._escapes` raises it before the operation happens). The import
system's bytecode caches (`__pycache__`) are let through: imports are never
simulated. C code that calls the C library itself raises no audit event and
stays out of reach (docs/reference/interposition.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from seedbed.aio import _escapes
from seedbed.fs._posix import STREAMS

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_ACCESS_READ = 1  # mmap.ACCESS_READ

_BYPASS = (
    "it reaches the real file system without passing through the node's simulated disk "
    "(C code calling _io or posix directly); open files with open(), os, pathlib, shutil "
    "or tempfile, which a node's disk serves"
)
_SQLITE = (
    "SQLite reads and writes its files in C, out of reach of the node's simulated disk "
    "(a crash could not lose what it never synced, and the file would outlive the run); "
    "use ':memory:' in the simulated node, or keep SQLite outside it"
)
_MMAP = (
    "a file-backed mmap reads and writes memory the simulated disk never sees; read "
    "and write the file through its file object instead (anonymous mmap, fileno=-1, is fine)"
)
# audit event -> (the call to name, the positions of the paths among its arguments)
_MUTATIONS: dict[str, tuple[str, tuple[int, ...]]] = {
    "os.rename": ("os.rename", (0, 1)),
    "os.remove": ("os.remove", (0,)),
    "os.rmdir": ("os.rmdir", (0,)),
    "os.mkdir": ("os.mkdir", (0,)),
    "os.truncate": ("os.truncate", (0,)),
    "os.chmod": ("os.chmod", (0,)),
    "os.chown": ("os.chown", (0,)),
    "os.utime": ("os.utime", (0,)),
    "os.link": ("os.link", (0, 1)),
    "os.symlink": ("os.symlink", (0, 1)),
    "os.setxattr": ("os.setxattr", (0,)),
    "os.removexattr": ("os.removexattr", (0,)),
    "os.chdir": ("os.chdir", (0,)),
}

_in_node: Callable[[], Any] = lambda: None  # noqa: E731  (`install` sets it)


def _text(path: Any) -> str:
    if isinstance(path, bytes):
        return path.decode("utf-8", "surrogateescape")
    return path if isinstance(path, str) else ""


def _bytecode(path: Any) -> bool:
    """A path the import system writes (a bytecode cache, or its directory)."""
    return "__pycache__" in _text(path).split("/")


def _on_open(args: tuple[Any, ...]) -> tuple[str, str] | None:
    path, mode, flags = (*args, None, None, None)[:3]
    if isinstance(path, int) or path is None or _bytecode(path) or _text(path) in STREAMS:
        return None
    if _in_node() is None:
        return None
    writing = isinstance(flags, int) and flags & _WRITE_FLAGS
    if isinstance(mode, str):
        writing = writing or any(c in mode for c in "wax+")
    return (f"open({path!r}, {mode or flags!r})", _BYPASS) if writing else None


def _on_mutation(event: str) -> Callable[[tuple[Any, ...]], tuple[str, str] | None]:
    call, positions = _MUTATIONS[event]

    def check(args: tuple[Any, ...]) -> tuple[str, str] | None:
        paths = [args[i] for i in positions if i < len(args)]
        if any(_bytecode(p) for p in paths) or _in_node() is None:
            return None
        return f"{call}({', '.join(repr(p) for p in paths)})", _BYPASS

    return check


def _on_sqlite(args: tuple[Any, ...]) -> tuple[str, str] | None:
    database = args[0] if args else None
    text = _text(os.fsdecode(database)) if isinstance(database, str | bytes) else str(database)
    if text == ":memory:" or (text.startswith("file:") and "mode=memory" in text):
        return None
    if text.startswith("file::memory:") or _in_node() is None:
        return None
    return f"sqlite3.connect({database!r})", _SQLITE


def _on_mmap(args: tuple[Any, ...]) -> tuple[str, str] | None:
    fileno = args[0] if args else -1
    access = args[2] if len(args) > 2 else 0
    files = _in_node()
    if fileno == -1 or files is None:
        return None
    if fileno not in files.fds and access == _ACCESS_READ:
        return None  # a real file only read (package data)
    return f"mmap.mmap({fileno}, ...)", _MMAP


def install(in_node: Callable[[], Any]) -> None:
    """Register the checks; `in_node()` is the running node's files, or None."""
    global _in_node
    _in_node = in_node
    _escapes.add_audit_check("open", _on_open)
    for event in sorted(_MUTATIONS):
        _escapes.add_audit_check(event, _on_mutation(event))
    _escapes.add_audit_check("sqlite3.connect", _on_sqlite)
    _escapes.add_audit_check("mmap.__new__", _on_mmap)
