"""The module-level functions of `seedbed.fs`: pick the backend, then delegate.

Inside a simulated node (`current_ref()` is set) every call goes to that
node's `SimDisk`; outside, to real files. The choice is made per call, so
one program runs unchanged in production and in simulation.
"""

from __future__ import annotations

import errno
import os
import posixpath

from seedbed._core.identity import current_ref
from seedbed.errors import UsageError
from seedbed.fs._file import File, parse_mode
from seedbed.fs._real import RealBackend
from seedbed.fs._simdisk import SimDisk

StrPath = str | os.PathLike[str]

_REAL = RealBackend()


def _backend() -> SimDisk | RealBackend:
    ref = current_ref()
    if ref is None:
        return _REAL
    if not ref.alive:
        raise OSError(errno.EIO, f"node {ref.name}#{ref.incarnation} has crashed")
    disk = ref.disk
    if not isinstance(disk, SimDisk):
        raise UsageError(
            f"seedbed.fs: node {ref.name} has no simulated disk (NodeRef.disk is {disk!r})"
        )
    return disk


async def open(path: StrPath, mode: str = "r") -> File:
    """Open a file: mode "r", "r+", "w", "w+", "a", "a+", "x" or "x+" (bytes only).

    Creating a file creates a name that is durable only after `fsync_dir` of
    its directory; "w" truncates, durably after `fsync()`.
    """
    parsed = parse_mode(mode)
    return await _backend().open(path, parsed)


async def read_file(path: StrPath) -> bytes:
    """The whole contents of a file."""
    async with await open(path, "r") as file:
        return await file.read()


async def write_file(path: StrPath, data: bytes, *, durable: bool = False) -> None:
    """Replace a file's contents with `data` (creating it if missing).

    With `durable=True` the data and the name are durable on return: the file
    and then its directory are fsynced. Not atomic: a crash before it returns
    may leave the file empty or partly written; write a temporary name and
    `rename` it for atomic replacement.
    """
    async with await open(path, "w") as file:
        await file.write(data)
        if durable:
            await file.fsync()
    if durable:
        await fsync_dir(posixpath.dirname(os.fspath(path)) or ".")


async def rename(src: StrPath, dst: StrPath) -> None:
    """Atomically rename `src` to `dst`, replacing a file at `dst` (POSIX rename(2)).

    Durable after `fsync_dir` of both directories (one, if they are the same).
    """
    await _backend().rename(src, dst)


async def remove(path: StrPath) -> None:
    """Remove a file (IsADirectoryError for a directory). Durable after `fsync_dir`."""
    await _backend().remove(path)


async def rmdir(path: StrPath) -> None:
    """Remove an empty directory. Durable after `fsync_dir` of its parent."""
    await _backend().rmdir(path)


async def listdir(path: StrPath = ".") -> list[str]:
    """The names in a directory, sorted."""
    return await _backend().listdir(path)


async def exists(path: StrPath) -> bool:
    """True if something (file or directory) has this name."""
    return await _backend().exists(path)


async def mkdir(path: StrPath, *, exist_ok: bool = False, parents: bool = False) -> None:
    """Create a directory (and missing parents with `parents=True`).

    Durable after `fsync_dir` of its parent (of each created directory's parent).
    """
    await _backend().mkdir(path, exist_ok=exist_ok, parents=parents)


async def fsync_dir(path: StrPath) -> None:
    """Make a directory's names durable: creates, renames and removes in it so far."""
    await _backend().fsync_dir(path)
