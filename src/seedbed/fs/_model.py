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

Contracts (`_core.contract`), each stated where the model is written and
where it is read: a truncation sets the size (`File` checks what a read then
returns); an fsync makes durable exactly what reads show, and synced bytes
change only by fsync, unless the disk itself diverged the two with a fault
it applied and recorded (a misdirected write, a failed fsync); a crash keeps a file with nothing
unsynced exactly as synced, never changes a synced byte that no unsynced
write or truncation touched, leaves the length between the synced and the
written one, and leaves no name on a lost node (nor does an fsynced
directory name one); a create never replaces a name, a remove leaves none,
a new directory is where it was made, and a rename moves one name, whole.
"""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Callable

from seedbed._core.contract import broken, require

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


class Write:
    """A pending write, where the disk will put it. Read-only by convention: a
    slotted class, not a frozen dataclass, whose `__init__` costs a generic
    `object.__setattr__` per field on every write (issue 30)."""

    __slots__ = ("data", "offset")

    def __init__(self, offset: int, data: bytes) -> None:
        self.offset = offset
        self.data = data

    def __repr__(self) -> str:
        return f"Write(offset={self.offset!r}, data={self.data!r})"


class Truncate:
    """A pending truncation (read-only by convention, as `Write`)."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return f"Truncate(size={self.size!r})"


class FileNode:
    __slots__ = (
        "data", "diverged", "durable", "lost", "mode", "mtime_ns", "number", "path", "pending",
    )  # fmt: skip

    def __init__(self, number: int, path: str) -> None:
        self.number = number
        self.path = path  # the latest name it was given: for labels and fault keys
        self.data = bytearray()
        self.durable = bytearray()
        self.pending: list[Write | Truncate] = []
        # A fault the disk applied (a misdirected write, a failed fsync) made
        # the durable bytes differ from what reads show, until the next crash.
        self.diverged = False
        self.lost = False  # a crash dropped it: no handle of a later incarnation reaches it
        # What `os.stat` shows through the Python file API (`_posix`); no durability.
        self.mode = 0o644
        self.mtime_ns = 0


class DirNode:
    """A directory. `merged` (the root and directories copied up from the real file
    system, see `_overlay`) shows the real directory's names beneath its own, but for
    `hidden` ones (removed or renamed away here); `hidden`, like `entries`, is
    durable after an fsync of the directory. `seedbed.fs` never reads either."""

    __slots__ = (
        "durable_entries", "durable_hidden", "entries", "hidden", "merged", "mode", "mtime_ns",
        "number",
    )  # fmt: skip

    def __init__(self, number: int, *, merged: bool = False) -> None:
        self.number = number
        self.entries: dict[str, int] = {}
        self.durable_entries: dict[str, int] = {}
        self.merged = merged
        self.hidden: set[str] = set()
        self.durable_hidden: set[str] = set()
        self.mode = 0o755
        self.mtime_ns = 0


Node = FileNode | DirNode
# What `DiskModel.locate` answers for a name a merged directory lacks and does not
# hide: the real file system beneath may have it (`_overlay` looks).
BENEATH = "beneath"
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
        self._nodes: dict[int, Node] = {0: DirNode(0, merged=True)}
        self._next = 1

    # -- namespace ----------------------------------------------------------

    def lookup(self, parts: Parts) -> Node | None:
        """The node at `parts`, or None. NotADirectoryError if a parent is a file."""
        found = self.locate(parts)
        return None if isinstance(found, str) else found

    def locate(self, parts: Parts) -> Node | str | None:
        """The node at `parts`; BENEATH if a merged directory on the way lacks the
        next name and does not hide it (the real file system decides); None if the
        disk has no such name. NotADirectoryError if a parent is a file."""
        node: Node = self._nodes[0]
        for depth, name in enumerate(parts):
            if not isinstance(node, DirNode):
                raise oserror(errno.ENOTDIR, join(parts[:depth]))
            number = node.entries.get(name)
            if number is None:
                return BENEATH if node.merged and name not in node.hidden else None
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
        require(parts[-1] not in parent.entries, "a create never replaces a name", path=join(parts))
        node = FileNode(self._take_number(), join(parts))
        self._nodes[node.number] = node
        parent.entries[parts[-1]] = node.number
        parent.hidden.discard(parts[-1])
        return node

    def create_unnamed(self, parts: Parts) -> FileNode:
        """A file in no directory (`O_TMPFILE`): gone at the next crash; `parts` names
        the directory it was made in, for labels."""
        node = FileNode(self._take_number(), join(parts))
        self._nodes[node.number] = node
        return node

    def mkdir(self, parts: Parts) -> None:
        parent = self._parent(parts)
        if parts[-1] in parent.entries:
            raise oserror(errno.EEXIST, join(parts))
        node = DirNode(self._take_number())
        self._nodes[node.number] = node
        parent.entries[parts[-1]] = node.number
        parent.hidden.discard(parts[-1])
        require(
            self.lookup(parts) is node, "a new directory is where it was made", path=join(parts)
        )

    def remove(self, parts: Parts) -> None:
        if self.file(parts) is None:
            raise oserror(errno.ENOENT, join(parts))
        del self._parent(parts).entries[parts[-1]]
        require(self.lookup(parts) is None, "a removed name is gone", path=join(parts))

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
        dst_parent.hidden.discard(dst[-1])
        self._rename_paths(node, join(dst))
        require(
            self.lookup(dst) is node and self.lookup(src) is None,
            "a rename moves one name, whole",
            src=join(src), dst=join(dst),
        )  # fmt: skip

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
        directory.durable_hidden = set(directory.hidden)

    def sync_all(self) -> None:
        """`sync()`: everything durable, every file's data and every directory's names."""
        for number in sorted(self._nodes):
            node = self._nodes[number]
            if isinstance(node, DirNode):
                node.durable_entries = dict(node.entries)
                node.durable_hidden = set(node.hidden)
            else:
                self.fsync(node)

    # -- the real file system beneath (see `_overlay`) ----------------------

    def adopt_dir(self, parts: Parts) -> DirNode:
        """Copy up a real directory: a merged one at `parts`, durable at once (it was
        on the disk from the start). Its parent must be here and lack the name."""
        parent = self._parent(parts)
        require(
            parts[-1] not in parent.entries, "a copy-up never replaces a name", path=join(parts)
        )
        node = DirNode(self._take_number(), merged=True)
        self._nodes[node.number] = node
        parent.entries[parts[-1]] = parent.durable_entries[parts[-1]] = node.number
        return node

    def adopt_file(self, parts: Parts, data: bytes) -> FileNode:
        """Copy up a real file with its contents, durable at once (as `adopt_dir`)."""
        parent = self._parent(parts)
        require(
            parts[-1] not in parent.entries, "a copy-up never replaces a name", path=join(parts)
        )
        node = FileNode(self._take_number(), join(parts))
        node.data = bytearray(data)
        node.durable = bytearray(data)
        self._nodes[node.number] = node
        parent.entries[parts[-1]] = parent.durable_entries[parts[-1]] = node.number
        return node

    def hide(self, parts: Parts) -> None:
        """Hide the real name beneath `parts` (a whiteout): durable after `fsync_dir`."""
        parent = self._parent(parts)
        require(parent.merged, "only a merged directory hides real names", path=join(parts))
        parent.hidden.add(parts[-1])

    def keep_new_names(self, parts: Parts, number: int) -> None:
        """Make durable the names on the way to node `number` at `parts` that were
        created since their directory's last fsync (never a renamed or replaced
        one): what ext4, XFS and btrfs do at the fsync of a new file or directory,
        which POSIX does not promise."""
        for depth in range(len(parts), 0, -1):
            parent = self.lookup(parts[: depth - 1])
            name = parts[depth - 1]
            if not isinstance(parent, DirNode) or parent.entries.get(name) != number:
                return  # removed or renamed away since: no name of its own to keep
            if name in parent.durable_entries:
                return
            parent.durable_entries[name] = number
            parent.durable_hidden.discard(name)
            number = parent.number

    # -- data ---------------------------------------------------------------

    @staticmethod
    def read(node: FileNode, offset: int, n: int) -> bytes:
        end = len(node.data) if n < 0 else offset + n
        return bytes(node.data[offset:end])

    @staticmethod
    def write(node: FileNode, offset: int, data: bytes, landed: int) -> None:
        """Show `data` at `offset`; the disk records it at `landed` (misdirected if not equal)."""
        buffer = node.data  # `apply` of a Write, inlined: once per write
        if offset > len(buffer):
            buffer.extend(bytes(offset - len(buffer)))
        buffer[offset : offset + len(data)] = data  # its bytes: checked at the next fsync and crash
        node.pending.append(Write(landed, data))
        if landed != offset:
            node.diverged = True

    @staticmethod
    def truncate(node: FileNode, size: int) -> None:
        apply(node.data, Truncate(size))
        require(len(node.data) == size, "a truncation sets the size", path=node.path, size=size)
        node.pending.append(Truncate(size))

    @staticmethod
    def fsync(node: FileNode) -> None:
        durable = node.durable
        for op in node.pending:  # in place: a WAL fsyncs often, and copies would be quadratic
            apply(durable, op)
        # Both images saw the same changes unless the disk diverged them: as
        # long here (a byte-for-byte comparison per fsync would cost a WAL
        # quadratic time), and byte for byte at the crash (`_check_images`).
        if len(durable) != len(node.data) and not node.diverged:
            broken("an fsync makes durable exactly what reads show", path=node.path)
        node.pending.clear()

    @staticmethod
    def lose_pending(node: FileNode) -> None:
        """A failed fsync: the writes it covered never reach the disk, though the
        page cache goes on showing them (Linux marks the pages clean)."""
        node.pending.clear()
        node.diverged = True

    # -- crash --------------------------------------------------------------

    def crash(self, settle: Settle) -> None:
        """Lose everything volatile. `settle` says what each surviving file then holds."""
        reachable = self._durable_tree()
        for number in list(self._nodes):
            if number not in reachable:
                dropped = self._nodes.pop(number)
                if isinstance(dropped, FileNode):
                    dropped.lost = True
        for number in sorted(reachable):
            node = self._nodes[number]
            if isinstance(node, DirNode):
                node.entries = dict(node.durable_entries)
                node.hidden = set(node.durable_hidden)
                continue
            node.path = reachable[number]
            _check_images(node)
            contents = settle(node)
            _check_settled(node, contents)
            node.data = contents
            node.durable = bytearray(contents)
            node.pending.clear()
            node.diverged = False
        require(
            all(
                child in self._nodes
                for node in self._nodes.values()
                if isinstance(node, DirNode)
                for child in node.entries.values()
            ),
            "a crash leaves no name on a lost node",
        )

    def durable_nodes(self) -> list[tuple[str, Node]]:
        """What a crash that lost every unsynced change would leave: each node
        reachable by durable names, with its path, parents before children."""
        tree = self._durable_tree()
        found = [(path, self._nodes[number]) for number, path in tree.items()]
        return sorted(found, key=lambda item: (len(split_path(item[0])), item[0]))

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
                require(child in self._nodes, "a durable name points at a node the disk holds")
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


def _check_images(node: FileNode) -> None:
    """Before a crash: the synced image plus the unsynced writes is what reads show,
    unless a fault the disk applied (and recorded) made them differ."""
    if node.diverged:
        return
    replayed = bytearray(node.durable)
    for op in node.pending:
        apply(replayed, op)
    require(replayed == node.data, "synced bytes change only by fsync", path=node.path)


def _check_settled(node: FileNode, contents: bytearray) -> None:
    """What a crash left of a file: its synced bytes, changed only where unsynced work was."""
    old, pending = node.durable, node.pending
    if not pending:
        require(contents == old, "a file with nothing unsynced survives a crash as synced")
        return
    written = len(old)
    for op in pending:
        if isinstance(op, Truncate):
            written = op.size
            continue
        written = max(written, op.offset + len(op.data))
    require(
        min(len(old), written) <= len(contents) <= max(len(old), written),
        "a crash leaves a file between its synced and its written length",
        path=node.path, synced=len(old), written=written, left=len(contents),
    )  # fmt: skip
    for low, high in _untouched(pending, len(contents)):
        mid = min(high, len(old))
        if (low < mid and contents[low:mid] != old[low:mid]) or (
            contents[max(low, mid) : high].strip(b"\0")
        ):
            broken(
                "a crash changes no synced byte that no unsynced write touched",
                path=node.path, span=(low, high),
            )  # fmt: skip


def _untouched(pending: list[Write | Truncate], size: int) -> list[tuple[int, int]]:
    """The ranges of [0, size) that no pending write covered and no truncation cut."""
    cut = size
    spans: list[tuple[int, int]] = []
    for op in pending:
        if isinstance(op, Truncate):
            cut = min(cut, op.size)
        elif op.data:
            spans.append((op.offset, op.offset + len(op.data)))
    free: list[tuple[int, int]] = []
    at = 0
    for low, high in sorted(spans):
        if at < min(low, cut):
            free.append((at, min(low, cut)))
        at = max(at, high)
    if at < cut:
        free.append((at, cut))
    return free
