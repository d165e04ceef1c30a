"""The real file system beneath a node's disk: read through, never written.

Through the Python file API (`_posix`) a node sees its simulated disk laid
over the machine's real file system, as a container sees its image under
overlayfs: a name the disk has is the disk's; a name it lacks, in a
directory the disk copied up from the real one (the root, `/tmp`, the
project's folder: "merged"), is the real file system's, read-only, unless
the node removed or renamed it there (then it is hidden). Package data,
certificates and zoneinfo are read where they are; nothing is ever written
to them.

Writing a real name copies it up first: the real directories on the way
become merged directories of the disk, and a real file the node opens for
writing becomes a disk file with the real file's contents. A copy-up is
durable at once (the data was on the machine before the node started), so
a crash returns the node to the real contents, never to nothing. The real
file system is read through `posix` and `_io`, which interposition never
rebinds (the import system uses them).
"""

from __future__ import annotations

import _io
import contextlib
import errno
import posix
import stat
from dataclasses import dataclass

from seedbed.fs._model import BENEATH, DirNode, FileNode, Node, Parts, join, oserror
from seedbed.fs._simdisk import SimDisk

# A copy-up reads the whole real file into the simulated disk's memory.
MAX_COPY_UP = 256 << 20


@dataclass(frozen=True)
class Place:
    """Where a path leads: a disk node, or a real file (its stat), or nothing."""

    parts: Parts
    node: Node | None
    real: posix.stat_result | None

    @property
    def exists(self) -> bool:
        return self.node is not None or self.real is not None

    @property
    def is_dir(self) -> bool:
        if self.node is not None:
            return isinstance(self.node, DirNode)
        return self.real is not None and stat.S_ISDIR(self.real.st_mode)

    @property
    def path(self) -> str:
        return join(self.parts)


def real_stat(path: str, *, follow: bool = True) -> posix.stat_result | None:
    """The real file system's stat of `path`, None if nothing is there."""
    try:
        return posix.stat(path, follow_symlinks=follow)
    except (FileNotFoundError, NotADirectoryError):
        return None


class Overlay:
    """One disk over the real file system (see the module docstring)."""

    __slots__ = ("disk", "model")

    def __init__(self, disk: SimDisk) -> None:
        self.disk = disk
        self.model = disk.model

    def place(self, parts: Parts, *, follow: bool = True) -> Place:
        found = self.model.locate(parts)
        if found == BENEATH:
            return Place(parts, None, real_stat(join(parts), follow=follow))
        assert not isinstance(found, str)
        return Place(parts, found, None)

    def names(self, place: Place) -> list[str]:
        """A directory's names, sorted: the disk's, and the real ones it does not hide."""
        node = place.node
        if node is None:
            return sorted(posix.listdir(place.path))
        if not isinstance(node, DirNode):
            raise oserror(errno.ENOTDIR, place.path)
        names = set(node.entries)
        if node.merged:
            # (nothing real beneath any more: the disk's own directory, as it is)
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                names.update(n for n in posix.listdir(place.path) if n not in node.hidden)
        return sorted(names)

    def has_real(self, parts: Parts) -> bool:
        """Is there a real name at `parts` that a merged parent would show or hide?"""
        parent = self.model.lookup(parts[:-1])
        return (
            isinstance(parent, DirNode)
            and parent.merged
            and real_stat(join(parts), follow=False) is not None
        )

    def copy_up_dirs(self, parts: Parts) -> DirNode:
        """The directory at `parts` on the disk, copying up real ones on the way."""
        node: Node | None = None
        for depth in range(len(parts) + 1):
            here = self.place(parts[:depth])
            if isinstance(here.node, DirNode):
                node = here.node
                continue
            if here.node is not None or (here.real and not stat.S_ISDIR(here.real.st_mode)):
                raise oserror(errno.ENOTDIR, here.path)
            if here.real is None:
                raise oserror(errno.ENOENT, here.path)
            node = self.model.adopt_dir(here.parts)
            node.mode, node.mtime_ns = stat.S_IMODE(here.real.st_mode), here.real.st_mtime_ns
        assert isinstance(node, DirNode)
        return node

    def copy_up_file(self, place: Place) -> FileNode:
        """A real regular file, now the disk's, with its contents (durable)."""
        real = place.real
        assert real is not None and place.node is None
        if not stat.S_ISREG(real.st_mode):
            raise oserror(errno.EPERM, place.path)
        if real.st_size > MAX_COPY_UP:
            raise OSError(
                errno.EFBIG,
                f"seedbed copies a real file up to a node's disk before writing it, "
                f"up to {MAX_COPY_UP >> 20} MiB; this one has {real.st_size} bytes",
                place.path,
            )
        self.copy_up_dirs(place.parts[:-1])
        with _io.open(place.path, "rb") as source:
            data = source.read()
        node = self.model.adopt_file(place.parts, data)
        node.mode, node.mtime_ns = stat.S_IMODE(real.st_mode), real.st_mtime_ns
        self.disk.files_changed()
        return node

    def copy_up(self, place: Place) -> Node:
        """A real file or directory, now the disk's."""
        if place.node is not None:
            return place.node
        if place.real is None:
            raise oserror(errno.ENOENT, place.path)
        if stat.S_ISDIR(place.real.st_mode):
            return self.copy_up_dirs(place.parts)
        return self.copy_up_file(place)
