"""What `os.stat` and `os.scandir` show of a node's simulated disk.

Results are the real types (`os.stat_result`, `os.statvfs_result`), built
from the disk's nodes: the inode is the node's number, the device a number
fixed by the disk's name (so `os.path.samefile` and `samestat` work, and
never confuse a simulated file with a real one), times the node's virtual
wall clock at the last change. `os.DirEntry` cannot be made from Python, so
`scandir` yields `Entry`, which has its attributes and methods.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

from seedbed.fs._model import DirNode, Node

BLOCK_SIZE = 4096  # st_blksize: what `open()` sizes its buffer by, as on ext4
_UID, _GID = os.getuid(), os.getgid()  # the simulated process is the real user's


def device_of(disk_name: str) -> int:
    """A device number for a disk: the same in every run, far from real ones."""
    digest = hashlib.blake2b(disk_name.encode("utf-8", "backslashreplace"), digest_size=4)
    return (0x5EED << 32) | int.from_bytes(digest.digest(), "big")


def stat_of(node: Node, device: int) -> os.stat_result:
    """`os.stat_result` of a disk node."""
    if isinstance(node, DirNode):
        mode, size, links = stat.S_IFDIR | node.mode, BLOCK_SIZE, 2
    else:
        mode, size, links = stat.S_IFREG | node.mode, len(node.data), 1
    ns = node.mtime_ns
    seconds = ns // 1_000_000_000
    blocks = -(-size // BLOCK_SIZE) * (BLOCK_SIZE // 512)
    return os.stat_result(
        (mode, node.number, device, links, _UID, _GID, size, seconds, seconds, seconds,
         ns / 1e9, ns / 1e9, ns / 1e9, ns, ns, ns, BLOCK_SIZE, blocks, 0)
    )  # fmt: skip


def statvfs_of(used_blocks: int) -> os.statvfs_result:
    """A roomy file system: 1 TiB of 4 KiB blocks, with what the disk holds used."""
    total = 1 << 28
    free = max(total - used_blocks, 0)
    return os.statvfs_result(
        (BLOCK_SIZE, BLOCK_SIZE, total, free, free, 1 << 24, 1 << 24, 1 << 24, 0, 255, 0)
    )


class Entry:
    """One `os.scandir` entry of a node's disk (or of the real file system beneath)."""

    __slots__ = ("_lstat", "_stat_of", "name", "path")

    def __init__(self, name: Any, path: Any, stat_of: Callable[[bool], os.stat_result]) -> None:
        self.name = name
        self.path = path
        self._stat_of = stat_of  # follow_symlinks -> the stat
        self._lstat: os.stat_result | None = None

    def __fspath__(self) -> Any:
        return self.path

    def __repr__(self) -> str:
        return f"<DirEntry {self.name!r}>"

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        if not follow_symlinks:
            if self._lstat is None:
                self._lstat = self._stat_of(False)
            return self._lstat
        return self._stat_of(True)

    def inode(self) -> int:
        return self.stat(follow_symlinks=False).st_ino

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        return self._is(stat.S_ISDIR, follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        return self._is(stat.S_ISREG, follow_symlinks)

    def is_symlink(self) -> bool:
        return self._is(stat.S_ISLNK, False)

    def is_junction(self) -> bool:
        return False

    def _is(self, test: Callable[[int], bool], follow: bool) -> bool:
        try:
            return test(self.stat(follow_symlinks=follow).st_mode)
        except FileNotFoundError:
            return False


class ScandirIterator:
    """What `os.scandir` returns: an iterator that is also a context manager."""

    __slots__ = ("_entries",)

    def __init__(self, entries: list[Entry]) -> None:
        self._entries: Iterator[Entry] | None = iter(entries)

    def __iter__(self) -> ScandirIterator:
        return self

    def __next__(self) -> Entry:
        if self._entries is None:
            raise StopIteration
        return next(self._entries)

    def close(self) -> None:
        self._entries = None

    def __enter__(self) -> ScandirIterator:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
