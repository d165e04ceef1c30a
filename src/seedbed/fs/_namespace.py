"""The `os` calls that change names and metadata on a node's disk (see `_posix`).

Each is the `os` function of the same name for the process `files` belongs
to. A real name (beneath the disk, see `_overlay`) is copied up before it
changes, and a real name removed or renamed away is hidden in its merged
directory; both the change and the hiding are volatile until an fsync of
the directory, as any name is. Directories copied up from the real file
system cannot be renamed (EXDEV, as overlayfs answers: `shutil.move` then
copies), nor can symbolic and hard links be made (the disk has none: a
`SimulationEscape` says so).
"""

from __future__ import annotations

import errno
import os
import posix
from typing import Any

from seedbed.fs._model import DirNode, FileNode, oserror
from seedbed.fs._overlay import Place
from seedbed.fs._posix import FILE, NodeFiles, _nothing

_LINKS = (
    "a node's simulated disk has no symbolic or hard links; write a file naming the "
    "target instead, or keep the program's links out of the simulated run"
)


def mkdir(files: NodeFiles, path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
    here = files.place(path, dir_fd)
    if here.exists:
        raise oserror(errno.EEXIST, here.path)
    parent = files.overlay.copy_up_dirs(here.parts[:-1])
    model = files.disk.model
    files.disk.now("mkdir", here.path, None, lambda: model.mkdir(here.parts))
    made = model.lookup(here.parts)
    assert isinstance(made, DirNode)
    made.mode = mode & ~files.umask & 0o7777
    made.mtime_ns = parent.mtime_ns = files._now_ns()


def rmdir(files: NodeFiles, path: Any, *, dir_fd: int | None = None) -> None:
    here = files.place(path, dir_fd)
    if not here.parts:
        raise oserror(errno.EBUSY, "/")
    _must_exist(here)
    if not here.is_dir:
        raise oserror(errno.ENOTDIR, here.path)
    if files.overlay.names(here):
        raise oserror(errno.ENOTEMPTY, here.path)
    _drop_name(files, here, "rmdir")


def unlink(files: NodeFiles, path: Any, *, dir_fd: int | None = None) -> None:
    """`os.unlink` and `os.remove`: a file's name goes; open descriptors keep the file."""
    here = files.place(path, dir_fd, follow=False)
    _must_exist(here)
    if here.is_dir:
        raise oserror(errno.EISDIR, here.path)
    _drop_name(files, here, "remove")


def _drop_name(files: NodeFiles, here: Place, op: str) -> None:
    """Remove a name: the disk's own, and the real one beneath (hidden)."""
    disk, model = files.disk, files.disk.model
    beneath = here.node is None or files.overlay.has_real(here.parts)
    parent = files.overlay.copy_up_dirs(here.parts[:-1])

    def drop() -> None:
        if here.node is not None:
            if op == "rmdir":
                model.rmdir(here.parts)
            else:
                disk.remove_now(here.parts)
        if beneath:
            model.hide(here.parts)

    disk.now(op, here.path, None, drop)
    parent.mtime_ns = files._now_ns()


def rename(
    files: NodeFiles,
    src: Any,
    dst: Any,
    *,
    src_dir_fd: int | None = None,
    dst_dir_fd: int | None = None,
) -> None:
    """`os.rename` and `os.replace` (the same on POSIX: a file at `dst` is replaced)."""
    old = files.place(src, src_dir_fd, follow=False)
    new = files.place(dst, dst_dir_fd, follow=False)
    _must_exist(old)
    if old.parts == new.parts:
        return
    _check_replace(files, old, new)
    if old.is_dir and (old.node is None or (isinstance(old.node, DirNode) and old.node.merged)):
        raise OSError(errno.EXDEV, "a directory of the real file system cannot be moved "
                      "on a node's disk (as on overlayfs); copy it", old.path)  # fmt: skip
    overlay, disk, model = files.overlay, files.disk, files.disk.model
    beneath = old.node is None or overlay.has_real(old.parts)
    overlay.copy_up(old)
    overlay.copy_up_dirs(new.parts[:-1])

    def move() -> None:
        disk.rename_now(old.parts, new.parts)
        if beneath:
            model.hide(old.parts)

    disk.now("rename", old.path, None, move)


def _check_replace(files: NodeFiles, old: Place, new: Place) -> None:
    if not new.exists:
        return
    if new.is_dir and not old.is_dir:
        raise oserror(errno.EISDIR, new.path)
    if old.is_dir and not new.is_dir:
        raise oserror(errno.ENOTDIR, new.path)
    if new.is_dir and files.overlay.names(new):
        raise oserror(errno.ENOTEMPTY, new.path)


def _must_exist(here: Place) -> None:
    if not here.exists:
        raise oserror(errno.ENOENT, here.path)


def truncate(files: NodeFiles, path: Any, length: int) -> None:
    here = files.place(path)
    _must_exist(here)
    if here.is_dir:
        raise oserror(errno.EISDIR, here.path)
    if length < 0:
        raise oserror(errno.EINVAL, here.path)
    node = files.overlay.copy_up(here)
    assert isinstance(node, FileNode)
    fd = files.open(here.path, os.O_WRONLY)
    try:
        files.ftruncate(fd, length)
    finally:
        files.close(fd)


def chmod(
    files: NodeFiles, path: Any, mode: int, *, dir_fd: int | None = None,
    follow_symlinks: bool = True,
) -> None:  # fmt: skip
    here = files.place(path, dir_fd, follow=follow_symlinks)
    _must_exist(here)
    node = files.overlay.copy_up(here)
    files.disk.now("chmod", here.path, None, _nothing)
    node.mode = mode & 0o7777


def utime(
    files: NodeFiles, path: Any, times: tuple[float, float] | None = None, *,
    ns: tuple[int, int] | None = None, dir_fd: int | None = None, follow_symlinks: bool = True,
) -> None:  # fmt: skip
    if times is not None and ns is not None:
        raise ValueError("utime: you may specify either 'times' or 'ns' but not both")
    here = files.place(path, dir_fd, follow=follow_symlinks)
    _must_exist(here)
    node = files.overlay.copy_up(here)
    if ns is not None:
        node.mtime_ns = int(ns[1])
    elif times is not None:
        node.mtime_ns = int(times[1] * 1_000_000_000)
    else:
        node.mtime_ns = files._now_ns()


def chown(
    files: NodeFiles, path: Any, uid: int, gid: int, *, dir_fd: int | None = None,
    follow_symlinks: bool = True,
) -> None:  # fmt: skip
    """Owners are not simulated: the name must exist, nothing changes."""
    _must_exist(files.place(path, dir_fd, follow=follow_symlinks))


def access(
    files: NodeFiles, path: Any, mode: int, *, dir_fd: int | None = None,
    effective_ids: bool = False, follow_symlinks: bool = True,
) -> bool:  # fmt: skip
    """Everything that exists may be read and written (a write copies a real name up)."""
    try:
        here = files.place(path, dir_fd, follow=follow_symlinks)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not here.exists:
        return False
    if mode & os.X_OK and here.node is not None and not here.is_dir:
        return bool(here.node.mode & 0o111)
    if here.node is None and mode & (os.R_OK | os.X_OK):
        return posix.access(here.path, mode & (os.R_OK | os.X_OK))
    return True


def fchmod(files: NodeFiles, fd: int, mode: int) -> None:
    handle = files.handle(fd)
    if handle.kind == FILE:
        handle.node.mode = mode & 0o7777
    else:
        chmod(files, handle.path, mode)


def refuse_link(files: NodeFiles, call: str) -> BaseException:
    files.check_alive()
    return files._escape(call, _LINKS)
