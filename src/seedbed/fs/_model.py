"""The state of one simulated disk: what a process sees, and what survives a crash.

Pure bookkeeping, no entropy and no time: `SimDisk` decides faults and tears
and calls in here. Every file and directory is a numbered node. A file keeps
three things: `data`, what reads return (the page cache); `durable`, what is
on the platter; and `pending`, the writes and truncations since its last
fsync, as the disk will record them. A directory keeps `entries`, the names
processes see, and `durable_entries`, the names as of its last fsync.

A crash rebuilds the namespace from the root through durable entries only,
forgets every node it cannot reach, and resets each surviving file to the
contents the caller settles on from its durable bytes and pending writes
(see `_tear`).
"""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass

Parts = tuple[str, ...]


def split_path(path: str | os.PathLike[str]) -> Parts:
    """The components of a path on a simulated disk, rooted at "/".

    Relative paths are relative to the root (a simulated node has no other
    working directory); "." and ".." are resolved lexically.
    """
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"seedbed.fs paths are str or PathLike[str], got {path!r}")
    if not text:
        raise oserror(errno.ENOENT, text)
    return tuple(part for part in posixpath.normpath("/" + text).split("/") if part)


def join(parts: Parts) -> str:
    """The canonical absolute form of a split path: the name used in labels and fault keys."""
    return "/" + "/".join(parts)


def oserror(code: int, path: str) -> OSError:
    """The OSError subclass Python itself raises for `code` (FileNotFoundError for ENOENT...)."""
    return OSError(code, os.strerror(code), path)


@dataclass(frozen=True)
class Write:
    """A pending write, where the disk will put it."""

    offset: int
    data: bytes


@dataclass(frozen=True)
class Truncate:
    size: int


class FileNode:
    __slots__ = ("data", "durable", "number", "path", "pending")

    def __init__(self, number: int, path: str) -> None:
        self.number = number
        self.path = path  # the latest name it was given: for labels and fault keys
        self.data = bytearray()
        self.durable = bytearray()
        self.pending: list[Write | Truncate] = []


class DirNode:
    __slots__ = ("durable_entries", "entries", "number")

    def __init__(self, number: int) -> None:
        self.number = number
        self.entries: dict[str, int] = {}
        self.durable_entries: dict[str, int] = {}


Node = FileNode | DirNode
Settle = Callable[[FileNode], bytearray]  # a file's contents after a crash


def apply(buffer: bytearray, op: Write | Truncate) -> None:
    """Apply one write or truncation to file contents, zero-filling any gap."""
    if isinstance(op, Truncate):
        del buffer[op.size :]
        buffer.extend(bytes(op.size - len(buffer)))
        return
    if op.offset > len(buffer):
        buffer.extend(bytes(op.offset - len(buffer)))
    buffer[op.offset : op.offset + len(op.data)] = op.data


class DiskModel:
    """One disk's namespace and file contents, volatile and durable."""

    def __init__(self) -> None:
        self._nodes: dict[int, Node] = {0: DirNode(0)}
        self._next = 1

    # -- namespace ----------------------------------------------------------

    def lookup(self, parts: Parts) -> Node | None:
        """The node at `parts`, or None. NotADirectoryError if a parent is a file."""
        node: Node = self._nodes[0]
        for depth, name in enumerate(parts):
            if not isinstance(node, DirNode):
                raise oserror(errno.ENOTDIR, join(parts[:depth]))
            number = node.entries.get(name)
            if number is None:
                return None
            node = self._nodes[number]
        return node

    def directory(self, parts: Parts) -> DirNode:
        """The directory at `parts` (FileNotFoundError / NotADirectoryError otherwise)."""
        node = self.lookup(parts)
        if node is None:
            raise oserror(errno.ENOENT, join(parts))
        if not isinstance(node, DirNode):
            raise oserror(errno.ENOTDIR, join(parts))
        return node

    def file(self, parts: Parts) -> FileNode | None:
        """The file at `parts`, None if nothing is there, IsADirectoryError for a directory."""
        node = self.lookup(parts)
        if isinstance(node, DirNode):
            raise oserror(errno.EISDIR, join(parts))
        return node

    def create_file(self, parts: Parts) -> FileNode:
        parent = self._parent(parts)
        node = FileNode(self._take_number(), join(parts))
        self._nodes[node.number] = node
        parent.entries[parts[-1]] = node.number
        return node

    def mkdir(self, parts: Parts) -> None:
        parent = self._parent(parts)
        if parts[-1] in parent.entries:
            raise oserror(errno.EEXIST, join(parts))
        node = DirNode(self._take_number())
        self._nodes[node.number] = node
        parent.entries[parts[-1]] = node.number

    def remove(self, parts: Parts) -> None:
        if self.file(parts) is None:
            raise oserror(errno.ENOENT, join(parts))
        del self._parent(parts).entries[parts[-1]]

    def rmdir(self, parts: Parts) -> None:
        if not parts:
            raise oserror(errno.EBUSY, "/")
        if self.directory(parts).entries:
            raise oserror(errno.ENOTEMPTY, join(parts))
        del self._parent(parts).entries[parts[-1]]

    def rename(self, src: Parts, dst: Parts) -> None:
        """POSIX rename(2): atomically points `dst` at `src`'s node, replacing a file there."""
        node = self.lookup(src)
        if node is None or not src:
            raise oserror(errno.ENOENT if src else errno.EBUSY, join(src))
        dst_parent = self._parent(dst)
        if src == dst:
            return
        if isinstance(node, DirNode) and dst[: len(src)] == src:
            raise oserror(errno.EINVAL, join(dst))
        target = self.lookup(dst)
        if target is node:  # two names of one node: rename(2) does nothing
            return
        if target is not None:
            self._check_replaceable(node, target, dst)
        del self._parent(src).entries[src[-1]]
        dst_parent.entries[dst[-1]] = node.number
        self._rename_paths(node, join(dst))

    def listdir(self, parts: Parts) -> list[str]:
        return sorted(self.directory(parts).entries)

    def file_paths(self) -> list[str]:
        """Every name of every file processes can see, sorted."""
        found: list[str] = []
        stack: list[tuple[DirNode, Parts]] = [(self.directory(()), ())]
        while stack:
            directory, parts = stack.pop()
            for name, number in directory.entries.items():
                node = self._nodes[number]
                if isinstance(node, DirNode):
                    stack.append((node, (*parts, name)))
                else:
                    found.append(join((*parts, name)))
        return sorted(found)

    def fsync_dir(self, parts: Parts) -> None:
        directory = self.directory(parts)
        directory.durable_entries = dict(directory.entries)

    # -- data ---------------------------------------------------------------

    @staticmethod
    def read(node: FileNode, offset: int, n: int) -> bytes:
        end = len(node.data) if n < 0 else offset + n
        return bytes(node.data[offset:end])

    @staticmethod
    def write(node: FileNode, offset: int, data: bytes, landed: int) -> None:
        """Show `data` at `offset`; the disk records it at `landed` (misdirected if not equal)."""
        apply(node.data, Write(offset, data))
        node.pending.append(Write(landed, data))

    @staticmethod
    def truncate(node: FileNode, size: int) -> None:
        apply(node.data, Truncate(size))
        node.pending.append(Truncate(size))

    @staticmethod
    def fsync(node: FileNode) -> None:
        for op in node.pending:  # in place: a WAL fsyncs often, and copies would be quadratic
            apply(node.durable, op)
        node.pending.clear()

    @staticmethod
    def lose_pending(node: FileNode) -> None:
        """A failed fsync: the writes it covered never reach the disk, though the
        page cache goes on showing them (Linux marks the pages clean)."""
        node.pending.clear()

    # -- crash --------------------------------------------------------------

    def crash(self, settle: Settle) -> None:
        """Lose everything volatile. `settle` says what each surviving file then holds."""
        reachable = self._durable_tree()
        for number in list(self._nodes):
            if number not in reachable:
                del self._nodes[number]
        for number in sorted(reachable):
            node = self._nodes[number]
            if isinstance(node, DirNode):
                node.entries = dict(node.durable_entries)
                continue
            node.path = reachable[number]
            contents = settle(node)
            node.data = contents
            node.durable = bytearray(contents)
            node.pending.clear()

    def _durable_tree(self) -> dict[int, str]:
        """Every node reachable from the root by durable entries, with its first path."""
        found: dict[int, str] = {0: "/"}
        stack: list[tuple[int, Parts]] = [(0, ())]
        while stack:
            number, parts = stack.pop()
            node = self._nodes[number]
            if not isinstance(node, DirNode):
                continue
            for name in sorted(node.durable_entries, reverse=True):
                child = node.durable_entries[name]
                if child not in found:
                    found[child] = join((*parts, name))
                    stack.append((child, (*parts, name)))
        return found

    # -- helpers ------------------------------------------------------------

    def _parent(self, parts: Parts) -> DirNode:
        if not parts:
            raise oserror(errno.EEXIST, "/")
        return self.directory(parts[:-1])

    def _take_number(self) -> int:
        number = self._next
        self._next += 1
        return number

    @staticmethod
    def _check_replaceable(node: Node, target: Node, dst: Parts) -> None:
        if isinstance(target, DirNode):
            if not isinstance(node, DirNode):
                raise oserror(errno.EISDIR, join(dst))
            if target.entries:
                raise oserror(errno.ENOTEMPTY, join(dst))
        elif isinstance(node, DirNode):
            raise oserror(errno.ENOTDIR, join(dst))

    def _rename_paths(self, node: Node, path: str) -> None:
        if isinstance(node, FileNode):
            node.path = path
            return
        for name in sorted(node.entries):
            self._rename_paths(self._nodes[node.entries[name]], f"{path.rstrip('/')}/{name}")
