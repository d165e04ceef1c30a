"""A node's files as its process sees them: descriptors, a working directory, `os` calls.

`NodeFiles` is the kernel side of the Python file API for one incarnation of
a node (a restart is a new process: new descriptors, the working directory
it started in). Its methods are `os` functions with their own arguments and
errors, served by the node's `SimDisk` through its blocking door (`now`:
latency blocks the thread, faults and crash semantics as `seedbed.fs`), with
the real file system beneath, read-only (`_overlay`).

Descriptors are numbered from FD_BASE, above any real descriptor a process
can hold, so a simulated one handed to C code (`select`, `mmap`, `fcntl`
that seedbed does not serve) fails with EBADF instead of touching a real
file. Directories opened inside a node always get a simulated descriptor;
a real file opened read-only gets a real one (it is only read).

Durability through this door is `seedbed.fs`'s (see its docstring), with one
difference that Linux file systems make: the fsync of a file also makes
durable the name it was created under (and new directories on the way),
as ext4, XFS and btrfs do; a rename or a remove still needs the directory's
fsync. `O_SYNC`/`O_DSYNC` files are fsynced after every write.
"""

from __future__ import annotations

import errno
import os
import posix
import stat
from collections.abc import Callable
from typing import Any

from seedbed._core.identity import NodeRef
from seedbed.fs._model import DirNode, FileNode, Parts, join, oserror, split_path
from seedbed.fs._overlay import Overlay, Place
from seedbed.fs._simdisk import SimDisk
from seedbed.fs._stat import Entry, ScandirIterator, device_of, stat_of, statvfs_of

FD_BASE = 1 << 30
FILE, DIR, NULL = "file", "dir", "null"
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_SYNC_FLAGS = getattr(os, "O_SYNC", 0) | getattr(os, "O_DSYNC", 0)
_DEV_NULL = "/dev/null"
# The process's own output: logs written to them go where print() goes.
STREAMS = ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2")


class OpenFile:
    """An open file description (what `dup` shares): a disk file, a directory or /dev/null."""

    __slots__ = ("append", "epoch", "kind", "node", "parts", "path", "position", "readable",
                 "sync", "writable")  # fmt: skip

    def __init__(self, kind: str, parts: Parts, node: Any, epoch: int) -> None:
        self.kind = kind
        self.parts = parts
        self.path = join(parts)  # as labels and fault keys name it
        self.node: FileNode = node  # (a directory's is looked up again: see `_dir_node`)
        self.epoch = epoch
        self.position = 0
        self.readable = self.writable = self.append = self.sync = False


def text_path(path: Any) -> tuple[str, bool]:
    """A path argument as str, and whether it came as bytes (answers follow suit)."""
    value = os.fspath(path)
    if isinstance(value, bytes):
        return os.fsdecode(value), True
    return value, False


class NodeFiles:
    """One incarnation's descriptors and working directory (see the module docstring)."""

    def __init__(
        self,
        ref: NodeRef,
        disk: SimDisk,
        now_ns: Callable[[], int],
        escape: Callable[[str, str], BaseException],
    ) -> None:
        self.ref = ref
        self.disk = disk
        self.overlay = Overlay(disk)
        self.device = device_of(disk.name)
        self.cwd = disk.home  # where the process starts: the machine's, as in production
        self.umask = 0o022
        self.fds: dict[int, OpenFile] = {}
        self._now_ns = now_ns  # the node's virtual wall clock: file times
        self._escape = escape  # (call, instead) -> the run's SimulationEscape

    # -- paths ------------------------------------------------------------------

    def parts(self, path: Any, dir_fd: int | None = None) -> Parts:
        text, _ = text_path(path)
        if not text:
            raise oserror(errno.ENOENT, text)
        if not text.startswith("/"):
            base = self.cwd if dir_fd is None else self.handle(dir_fd, DIR).path
            text = f"{base}/{text}"
        return split_path(text)

    def place(self, path: Any, dir_fd: int | None = None, *, follow: bool = True) -> Place:
        self.check_alive()
        return self.overlay.place(self.parts(path, dir_fd), follow=follow)

    def check_alive(self) -> None:
        if not self.ref.alive:
            raise OSError(errno.EIO, f"node {self.ref.name}#{self.ref.incarnation} has crashed")

    def handle(self, fd: int, kind: str | None = None) -> OpenFile:
        """The open file behind a simulated descriptor (EBADF if none; ENOTDIR if not `kind`)."""
        self.check_alive()
        found = self.fds.get(fd)
        if found is None:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        if kind == DIR and found.kind != DIR:
            raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        return found

    def _new_fd(self, handle: OpenFile) -> int:
        fd = FD_BASE
        while fd in self.fds:  # the lowest free, as POSIX hands them out
            fd += 1
        self.fds[fd] = handle
        return fd

    # -- opening and closing ----------------------------------------------------

    def open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        """`os.open`: a simulated descriptor, or a real one for a real file only read."""
        here = self.place(path, dir_fd)
        access = flags & os.O_ACCMODE
        readable, writable = access != os.O_WRONLY, access != os.O_RDONLY
        creating, exclusive = bool(flags & os.O_CREAT), bool(flags & os.O_EXCL)
        if _O_TMPFILE and flags & _O_TMPFILE == _O_TMPFILE:
            return self._open_unnamed(here, writable, readable, mode)
        if here.exists and creating and exclusive:
            raise oserror(errno.EEXIST, here.path)
        if here.is_dir:
            if writable or creating:
                raise oserror(errno.EISDIR, here.path)
            return self._new_fd(OpenFile(DIR, here.parts, None, self.disk.crashes))
        if flags & getattr(os, "O_DIRECTORY", 0):
            raise oserror(errno.ENOTDIR if here.exists else errno.ENOENT, here.path)
        if here.node is None and here.real is not None:
            real = self._open_real(here, flags, writable)
            if real is not None:
                return real
        elif not here.exists:
            if not creating:
                raise oserror(errno.ENOENT, here.path)
            self.overlay.copy_up_dirs(here.parts[:-1])
        truncate = bool(flags & os.O_TRUNC) and writable
        disk = self.disk
        node = disk.now("open", here.path, None, lambda: disk.open_now(
            here.parts, create=creating, exclusive=exclusive, truncate=truncate))  # fmt: skip
        if not here.exists:
            node.mode = mode & ~self.umask & 0o7777
        if truncate or not here.exists:
            node.mtime_ns = self._now_ns()
        return self._new_fd(self._file(here.parts, node, flags, readable, writable))

    def _file(
        self, parts: Parts, node: FileNode, flags: int, readable: bool, writable: bool
    ) -> OpenFile:
        handle = OpenFile(FILE, parts, node, self.disk.crashes)
        handle.readable, handle.writable = readable, writable
        handle.append = bool(flags & os.O_APPEND)
        handle.sync = bool(flags & _SYNC_FLAGS) and writable
        return handle

    def _open_real(self, here: Place, flags: int, writable: bool) -> int | None:
        """A real name: /dev/null simulated, a device refused for writing, a file only
        read opened for real (its descriptor is real); None: copied up, open it here."""
        assert here.real is not None
        if here.path == _DEV_NULL:
            handle = OpenFile(NULL, here.parts, None, self.disk.crashes)
            handle.readable, handle.writable = True, True
            return self._new_fd(handle)
        if here.path in STREAMS:
            return posix.open(here.path, flags)
        if not stat.S_ISREG(here.real.st_mode):
            if writable:
                raise self._escape(
                    f"os.open({here.path!r}) for writing",
                    "only regular files and /dev/null are simulated on a node's disk; "
                    "write to a file, or fake the device for the run",
                )
            return posix.open(here.path, flags)
        if writable or flags & os.O_TRUNC:
            self.overlay.copy_up_file(here)
            return None
        return posix.open(here.path, flags)

    def _open_unnamed(self, here: Place, writable: bool, readable: bool, mode: int) -> int:
        """`O_TMPFILE`: a file in no directory, gone at a crash or its last close."""
        if not writable:
            raise oserror(errno.EINVAL, here.path)
        directory = self.overlay.copy_up_dirs(here.parts)
        assert isinstance(directory, DirNode)
        disk = self.disk
        node = disk.now("open", here.path, None, lambda: disk.model.create_unnamed(here.parts))
        node.mode, node.mtime_ns = mode & ~self.umask & 0o7777, self._now_ns()
        return self._new_fd(self._file(here.parts, node, 0, readable, writable))

    def close(self, fd: int) -> None:
        self.fds.pop(fd)

    def dup(self, fd: int) -> int:
        return self._new_fd(self.handle(fd))

    def dup2(self, fd: int, fd2: int) -> int:
        handle = self.handle(fd)
        if fd2 < FD_BASE:
            raise self._escape(
                f"os.dup2() of a simulated file onto descriptor {fd2}",
                "a real descriptor (stdout, a log file) cannot be pointed at a node's "
                "disk; write to the file object instead",
            )
        self.fds[fd2] = handle
        return fd2

    # -- data -------------------------------------------------------------------

    def read(self, fd: int, n: int, offset: int | None = None) -> bytes:
        """`os.read` (`os.pread` with `offset`)."""
        handle = self._data(fd, readable=True)
        if n < 0 or (offset is not None and offset < 0):
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if handle.kind == NULL:
            return b""
        at = handle.position if offset is None else offset
        disk = self.disk
        data = disk.now("read", handle.path, handle.epoch, lambda: disk.read_now(handle, at, n))
        if offset is None:
            handle.position = at + len(data)
        return data

    def write(self, fd: int, data: Any, offset: int | None = None) -> int:
        """`os.write` (`os.pwrite` with `offset`; on Linux a pwrite to an O_APPEND
        file appends)."""
        handle = self._data(fd, writable=True)
        payload = bytes(memoryview(data))
        if offset is not None and offset < 0:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if handle.kind == NULL:
            return len(payload)
        at = None if handle.append else (handle.position if offset is None else offset)
        disk = self.disk
        end = disk.now("write", handle.path, handle.epoch,
                       lambda: disk.write_now(handle, at, payload))  # fmt: skip
        if offset is None or handle.append:
            handle.position = end
        handle.node.mtime_ns = self._now_ns()
        if handle.sync:
            self.fsync(fd)
        return len(payload)

    def _data(self, fd: int, *, readable: bool = False, writable: bool = False) -> OpenFile:
        handle = self.handle(fd)
        if handle.kind == DIR:
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
        if (readable and not handle.readable) or (writable and not handle.writable):
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return handle

    def lseek(self, fd: int, position: int, how: int) -> int:
        handle = self.handle(fd)
        size = len(handle.node.data) if handle.kind == FILE else 0
        if how == os.SEEK_SET:
            target = position
        elif how == os.SEEK_CUR:
            target = handle.position + position
        elif how == os.SEEK_END:
            target = size + position
        elif how in (getattr(os, "SEEK_DATA", -1), getattr(os, "SEEK_HOLE", -1)):
            if position >= size:
                raise OSError(errno.ENXIO, os.strerror(errno.ENXIO))
            target = position if how == getattr(os, "SEEK_DATA", -1) else size
        else:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if target < 0:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        handle.position = target
        return target

    def fsync(self, fd: int) -> None:
        """`os.fsync`/`fdatasync`: a file's data (and its new name, see the module
        docstring); a directory's names; nothing for a real directory or /dev/null."""
        handle = self.handle(fd)
        disk = self.disk
        if handle.kind == FILE:
            disk.now("fsync", handle.path, handle.epoch, lambda: disk.fsync_now(handle))
            node = handle.node
            if not node.lost:
                disk.model.keep_new_names(split_path(node.path), node.number)
        elif handle.kind == DIR:
            here = self.overlay.place(handle.parts)
            directory = here.node
            if isinstance(directory, DirNode):
                disk.now("fsync_dir", handle.path, None,
                         lambda: disk.model.fsync_dir(handle.parts))  # fmt: skip
                disk.model.keep_new_names(handle.parts, directory.number)

    def ftruncate(self, fd: int, length: int) -> None:
        handle = self._data(fd)
        if not handle.writable or length < 0:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if handle.kind == FILE:
            disk = self.disk
            disk.now("truncate", handle.path, handle.epoch,
                     lambda: disk.truncate_now(handle, length))  # fmt: skip
            handle.node.mtime_ns = self._now_ns()

    def fallocate(self, fd: int, offset: int, length: int) -> None:
        """`os.posix_fallocate`: the file is at least offset + length long."""
        handle = self._data(fd, writable=True)
        if handle.kind == FILE and offset + length > len(handle.node.data):
            self.ftruncate(fd, offset + length)

    # -- what a descriptor names ------------------------------------------------

    def fstat(self, fd: int) -> os.stat_result:
        handle = self.handle(fd)
        if handle.kind == FILE:
            return stat_of(handle.node, self.device)
        if handle.kind == NULL:
            return posix.stat(_DEV_NULL)
        return self._stat_place(self.overlay.place(handle.parts), handle.path)

    def _stat_place(self, here: Place, path: Any) -> os.stat_result:
        if here.node is not None:
            return stat_of(here.node, self.device)
        if here.real is not None:
            return here.real
        raise oserror(errno.ENOENT, os.fspath(path) if not isinstance(path, int) else "")

    def stat(
        self, path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        here = self.place(path, dir_fd, follow=follow_symlinks)
        if here.node is not None:
            self.disk.now("stat", here.path, None, _nothing)
        return self._stat_place(here, path)

    def listdir(self, path: Any) -> list[Any]:
        names, as_bytes = self._names(path)
        return [os.fsencode(name) for name in names] if as_bytes else names

    def scandir(self, path: Any) -> ScandirIterator:
        """`os.scandir`: entries named as the call named the directory."""
        names, as_bytes = self._names(path)
        if isinstance(path, int):
            base = join(self.handle(path, DIR).parts)
            prefix: Any = ""
        else:
            base = join(self.parts(path))
            given = os.fspath(path)
            prefix = given if given in ("", b"") else os.path.join(given, given[:0])
        entries = []
        for name in names:
            shown: Any = os.fsencode(name) if as_bytes else name
            where = f"{base.rstrip('/')}/{name}"
            entries.append(Entry(shown, prefix + shown if prefix else shown, self._stat_at(where)))
        return ScandirIterator(entries)

    def _stat_at(self, where: str) -> Callable[[bool], os.stat_result]:
        return lambda follow: self.stat(where, follow_symlinks=follow)

    def _names(self, path: Any) -> tuple[list[str], bool]:
        if isinstance(path, int):
            here, as_bytes = self.overlay.place(self.handle(path, DIR).parts), False
        else:
            here, as_bytes = self.place(path), text_path(path)[1]
        if not here.exists:
            raise oserror(errno.ENOENT, here.path)
        if not here.is_dir:
            raise oserror(errno.ENOTDIR, here.path)
        if here.node is not None:
            self.disk.now("listdir", here.path, None, _nothing)
        return self.overlay.names(here), as_bytes

    def readlink(self, path: Any, *, dir_fd: int | None = None) -> Any:
        here = self.place(path, dir_fd, follow=False)
        if here.node is None and here.real is not None:
            if text_path(path)[1]:
                return posix.readlink(os.fsencode(here.path))
            return posix.readlink(here.path)
        raise oserror(errno.EINVAL if here.exists else errno.ENOENT, here.path)

    def statvfs(self, path: Any) -> os.statvfs_result:
        here = self.place(path)
        if here.node is None and here.real is not None:
            return posix.statvfs(here.path)
        if not here.exists:
            raise oserror(errno.ENOENT, here.path)
        return statvfs_of(0)

    # -- the working directory --------------------------------------------------

    def chdir(self, path: Any) -> None:
        if isinstance(path, int):
            self.cwd = self.handle(path, DIR).path
            return
        here = self.place(path)
        if not here.exists:
            raise oserror(errno.ENOENT, here.path)
        if not here.is_dir:
            raise oserror(errno.ENOTDIR, here.path)
        self.cwd = here.path


def _nothing() -> None:
    """The action of a call that only reads what `place` found (its latency is all)."""
