"""The Python file API inside a node reaches the node's simulated disk.

An interposition provider (`seedbed.aio._providers`): for the duration of a
run, `open`/`io.open` and the `os` functions that touch files (and
`fcntl`'s locks) are stand-ins. Called from a node's code on the run's
thread, each serves the call from that incarnation's `NodeFiles`; anywhere
else (outside runs, other threads, the world's own code, `seedbed.run`
without a world) it calls the real function. `os.path`, `pathlib`,
`shutil`, `tempfile`, `glob` and `os.walk` are built on these, so they follow.

Imports never pass through: the import system calls `posix` and `_io`
directly, and those two modules keep the originals (`spares`); this module
calls them too, for the real file system read beneath a node's disk.

Never silent: what would still reach the real file system from a node
without passing through here is refused by the audit hook with a
`SimulationEscape` (`_checks`): a real file opened for writing, renamed,
removed or created by a path the stand-ins did not see (C code calling
`_io` or `posix` directly), `sqlite3.connect` on a file, and a file-backed
`mmap`. Bytecode caches the import system writes are let through.

`tempfile` draws its names from the run: its name generator is reset and
its directory is `/tmp` for each run (restored after), so a seed names the
same files whatever ran before it.
"""

from __future__ import annotations

import _io
import _thread
import os
import posix
import tempfile
from collections.abc import Callable
from typing import Any

from seedbed._core.identity import NODE
from seedbed.aio import _breakpoint, _providers
from seedbed.aio._host import InterposeHost
from seedbed.fs import _checks, _namespace, _procfs
from seedbed.fs._fileobj import open_file
from seedbed.fs._posix import NodeFiles
from seedbed.fs._simdisk import SimDisk

_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident


def node_files() -> NodeFiles | None:
    """The files of the node whose code runs now on the run's thread, else None."""
    host = _host
    if host is None or _get_ident() != _owner:
        return None
    ref = NODE.get()
    if ref is None or _breakpoint.debugging:
        return None
    files = ref.files
    if files is None:
        disk = ref.disk
        if not isinstance(disk, SimDisk):
            return None  # a node made without a disk (a test's): real files, as before
        files = ref.files = NodeFiles(ref, disk, host.wall_ns, host.escape)
    return files  # type: ignore[no-any-return]


# -- the stand-ins ----------------------------------------------------------------


def _named(stand_in: Callable[..., Any], real: Callable[..., Any]) -> Callable[..., Any]:
    stand_in.__name__ = stand_in.__qualname__ = getattr(real, "__name__", "stand_in")
    stand_in.__doc__ = getattr(real, "__doc__", None)
    return stand_in


def _on_fd(real: Callable[..., Any], serve: Callable[..., Any]) -> Callable[..., Any]:
    """`real(fd, ...)`, served for a node's simulated descriptors."""

    def stand_in(fd: Any, *args: Any, **kwargs: Any) -> Any:
        files = node_files()
        if files is None:
            return real(fd, *args, **kwargs)
        if not isinstance(fd, int) and hasattr(fd, "fileno"):
            fd = fd.fileno()  # os.fsync(file_object)
        if fd in files.fds:
            return serve(files, fd, *args, **kwargs)
        return real(fd, *args, **kwargs)

    return _named(stand_in, real)


def _on_path(
    real: Callable[..., Any], serve: Callable[..., Any], by_fd: Callable[..., Any] | None = None
) -> Callable[..., Any]:
    """`real(path, ...)`, served inside a node (`by_fd` when the path is a descriptor)."""

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        files = node_files()
        if files is None:
            return real(*args, **kwargs)
        path = args[0] if args else kwargs.get("path", ".")
        if isinstance(path, int):
            if by_fd is not None and path in files.fds:
                return by_fd(files, path, *args[1:])
            return real(*args, **kwargs)
        return serve(files, *args, **kwargs)

    return _named(stand_in, real)


def _open(file: Any, *args: Any, **kwargs: Any) -> Any:
    host = _host
    if host is not None and _get_ident() == _owner and isinstance(file, str | bytes | os.PathLike):
        name = _procfs.served(host, file)  # /proc/self/stat...: the simulated process's
        if name is not None:
            return _procfs.open_view(host, name, *args, **kwargs)
    files = node_files()
    if files is None or (isinstance(file, int) and file not in files.fds):
        return _io.open(file, *args, **kwargs)
    return open_file(files, file, *args, **kwargs)


def _copy_between(real: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`os.sendfile(out, in, offset, count)` and `os.copy_file_range(src, dst, count,
    offset_src, offset_dst)` (`shutil` copies with them): served when either
    descriptor is simulated, as a read and a write."""

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        files = node_files()
        if files is None or not any(fd in files.fds for fd in args[:2]):
            return real(*args, **kwargs)
        if name == "sendfile":
            out_fd, in_fd, offset, count = args
            return _write_any(files, out_fd, _read_any(files, in_fd, count, offset), None)
        src, dst, count, *rest = args
        offset_src = rest[0] if rest else kwargs.get("offset_src")
        offset_dst = rest[1] if len(rest) > 1 else kwargs.get("offset_dst")
        return _write_any(files, dst, _read_any(files, src, count, offset_src), offset_dst)

    return _named(stand_in, real)


def _read_any(files: NodeFiles, fd: int, count: int, offset: int | None) -> bytes:
    if fd in files.fds:
        return files.read(fd, count, offset)
    return posix.pread(fd, count, offset) if offset is not None else posix.read(fd, count)


def _write_any(files: NodeFiles, fd: int, data: bytes, offset: int | None) -> int:
    if fd in files.fds:
        return files.write(fd, data, offset)
    return posix.pwrite(fd, data, offset) if offset is not None else posix.write(fd, data)


def _dup2(fd: int, fd2: int, inheritable: bool = True) -> int:
    files = node_files()
    if files is None or fd not in files.fds:
        return posix.dup2(fd, fd2, inheritable)
    return files.dup2(fd, fd2)


def _umask(mask: int) -> int:
    files = node_files()
    if files is None:
        return posix.umask(mask)
    old, files.umask = files.umask, mask & 0o777
    return old


def _sync() -> None:
    files = node_files()
    if files is None:
        posix.sync()
        return
    files.check_alive()
    files.disk.sync()


def _cwd(as_bytes: bool) -> Callable[[], Any]:
    real = posix.getcwdb if as_bytes else posix.getcwd

    def getcwd() -> Any:
        files = node_files()
        if files is None:
            return real()
        files.check_alive()
        return os.fsencode(files.cwd) if as_bytes else files.cwd

    return _named(getcwd, real)


def _refused(real: Callable[..., Any], call: str) -> Callable[..., Any]:
    """A call a node's disk cannot serve (links, FIFOs, device nodes): an escape."""

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        files = node_files()
        if files is None:
            return real(*args, **kwargs)
        raise _namespace.refuse_link(files, f"os.{call}()")

    return _named(stand_in, real)


def _fixed(value: Any) -> Callable[..., Any]:
    """What a simulated descriptor answers, whatever is asked (isatty: False...)."""
    return lambda files, fd, *args, **kwargs: value


def _none(*args: Any, **kwargs: Any) -> None:
    """A call that changes nothing on a simulated file (locks: one process per node)."""


def _xattr_missing(files: NodeFiles, path: Any, *args: Any, **kwargs: Any) -> Any:
    files.check_alive()
    raise OSError(61, os.strerror(61), os.fspath(path) if not isinstance(path, int) else None)


def _xattr_unsupported(files: NodeFiles, path: Any, *args: Any, **kwargs: Any) -> Any:
    files.check_alive()
    raise OSError(95, os.strerror(95), os.fspath(path) if not isinstance(path, int) else None)


def _pairs() -> list[tuple[object, object]]:
    """(original, stand-in) for every file function a node's code may call."""
    p = posix
    fd_calls: list[tuple[Any, Callable[..., Any]]] = [
        (p.close, lambda f, fd: f.close(fd)),
        (p.read, lambda f, fd, n: f.read(fd, n)),
        (p.pread, lambda f, fd, n, offset: f.read(fd, n, offset)),
        (p.write, lambda f, fd, data: f.write(fd, data)),
        (p.pwrite, lambda f, fd, data, offset: f.write(fd, data, offset)),
        (p.readv, _readv),
        (p.writev, lambda f, fd, buffers: f.write(fd, b"".join(bytes(b) for b in buffers))),
        (p.lseek, lambda f, fd, position, how: f.lseek(fd, position, how)),
        (p.fsync, lambda f, fd: f.fsync(fd)),
        (p.fdatasync, lambda f, fd: f.fsync(fd)),
        (p.ftruncate, lambda f, fd, length: f.ftruncate(fd, length)),
        (p.fstat, lambda f, fd: f.fstat(fd)),
        (p.fstatvfs, lambda f, fd: f.statvfs(f.handle(fd).path)),
        (p.dup, lambda f, fd, *a: f.dup(fd)),
        (p.fchmod, lambda f, fd, mode: _namespace.fchmod(f, fd, mode)),
        (p.fchown, lambda f, fd, *a: f.handle(fd) and None),
        (p.fchdir, lambda f, fd: f.chdir(fd)),
        (p.isatty, _fixed(False)),
        (p.get_inheritable, _fixed(False)),
        (p.set_inheritable, _fixed(None)),
        (p.get_blocking, _fixed(True)),
        (p.set_blocking, _fixed(None)),
        (p.lockf, _fixed(None)),
        (p.posix_fallocate, lambda f, fd, offset, length: f.fallocate(fd, offset, length)),
        (p.posix_fadvise, _fixed(None)),
    ]
    path_calls: list[tuple[Any, Callable[..., Any], Callable[..., Any] | None]] = [
        (p.open, lambda f, *a, **k: f.open(*a, **k), None),
        (p.stat, lambda f, *a, **k: f.stat(*a, **k), lambda f, fd: f.fstat(fd)),
        (p.lstat, _lstat, None),
        (p.listdir, lambda f, path=None: f.listdir(path or "."), lambda f, fd: f.listdir(fd)),
        (p.scandir, lambda f, path=None: f.scandir(path or "."), lambda f, fd: f.scandir(fd)),
        (p.mkdir, _namespace.mkdir, None),
        (p.rmdir, _namespace.rmdir, None),
        (p.unlink, _namespace.unlink, None),
        (p.remove, _namespace.unlink, None),
        (p.rename, _namespace.rename, None),
        (p.replace, _namespace.rename, None),
        (p.truncate, _namespace.truncate, lambda f, fd, length: f.ftruncate(fd, length)),
        (p.chmod, _namespace.chmod, lambda f, fd, mode: _namespace.fchmod(f, fd, mode)),
        (p.chown, _namespace.chown, lambda f, fd, *a: f.handle(fd) and None),
        (p.lchown, _namespace.chown, None),
        (p.utime, _namespace.utime, lambda f, fd, *a, **k: f.handle(fd) and None),
        (p.access, _namespace.access, None),
        (p.readlink, lambda f, *a, **k: f.readlink(*a, **k), None),
        (p.statvfs, lambda f, path: f.statvfs(path), lambda f, fd: f.statvfs(f.handle(fd).path)),
        (p.chdir, lambda f, path: f.chdir(path), lambda f, fd: f.chdir(fd)),
        (p.listxattr, _listxattr, _fixed([])),
        (p.getxattr, _xattr_missing, _xattr_missing),
        (p.setxattr, _xattr_unsupported, _xattr_unsupported),
        (p.removexattr, _xattr_missing, _xattr_missing),
    ]
    pairs: list[tuple[object, object]] = [(_io.open, _open)]
    pairs += [(real, _on_fd(real, serve)) for real, serve in fd_calls]
    pairs += [(real, _on_path(real, serve, by_fd)) for real, serve, by_fd in path_calls]
    pairs += [
        (p.getcwd, _cwd(False)),
        (p.getcwdb, _cwd(True)),
        (p.dup2, _named(_dup2, p.dup2)),
        (p.umask, _named(_umask, p.umask)),
        (p.sync, _named(_sync, p.sync)),
        (p.sendfile, _copy_between(p.sendfile, "sendfile")),
        *[
            (getattr(p, call), _refused(getattr(p, call), call))
            for call in ("link", "symlink", "mkfifo", "mknod")
        ],
    ]
    if hasattr(p, "copy_file_range"):
        pairs.append((p.copy_file_range, _copy_between(p.copy_file_range, "copy_file_range")))
    return pairs + _fcntl_pairs()


def _readv(files: NodeFiles, fd: int, buffers: Any) -> int:
    total = 0
    for buffer in buffers:
        view = memoryview(buffer).cast("B")
        data = files.read(fd, len(view))
        view[: len(data)] = data
        total += len(data)
        if len(data) < len(view):
            break
    return total


def _lstat(files: NodeFiles, path: Any, *, dir_fd: int | None = None) -> os.stat_result:
    return files.stat(path, dir_fd=dir_fd, follow_symlinks=False)


def _listxattr(files: NodeFiles, path: Any = None, **kwargs: Any) -> list[str]:
    files.stat(path if path is not None else ".")
    return []


def _fcntl_pairs() -> list[tuple[object, object]]:
    """`fcntl`'s locks and flags on a simulated descriptor (one process per node:
    a lock is always granted); ioctl has nothing to say to a disk file."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return []

    def get_flags(files: NodeFiles, fd: int, cmd: int, arg: Any = 0) -> Any:
        handle = files.handle(fd)
        if cmd == fcntl.F_GETFL:
            access = os.O_RDWR if handle.readable and handle.writable else (
                os.O_WRONLY if handle.writable else os.O_RDONLY)  # fmt: skip
            return access | (os.O_APPEND if handle.append else 0)
        if cmd == fcntl.F_GETFD:
            return fcntl.FD_CLOEXEC
        return arg if isinstance(arg, bytes) else 0

    def ioctl(files: NodeFiles, fd: int, *args: Any) -> Any:
        raise OSError(25, os.strerror(25))

    return [
        (fcntl.flock, _on_fd(fcntl.flock, _fixed(None))),
        (fcntl.lockf, _on_fd(fcntl.lockf, _fixed(None))),
        (fcntl.fcntl, _on_fd(fcntl.fcntl, get_flags)),
        (fcntl.ioctl, _on_fd(fcntl.ioctl, ioctl)),
    ]


# -- going live for a run ------------------------------------------------------------

_SUPPORTS = ("supports_dir_fd", "supports_fd", "supports_follow_symlinks",
             "supports_effective_ids")  # fmt: skip
_saved_tempfile: tuple[Any, Any] | None = None
_added: list[tuple[set[Any], object]] = []


def bind(host: InterposeHost | None, owner: int) -> None:
    """A run begins (host) or ends (None): the stand-ins serve it, tempfile is reset."""
    global _host, _owner, _saved_tempfile
    _host, _owner = host, owner
    if host is not None:
        _saved_tempfile = (tempfile.tempdir, tempfile._name_sequence)  # type: ignore[attr-defined]
        tempfile._name_sequence = None  # type: ignore[attr-defined]
        if tempfile.tempdir is None:
            tempfile.tempdir = "/tmp"
        _advertise()
    elif _saved_tempfile is not None:
        tempfile.tempdir, tempfile._name_sequence = _saved_tempfile  # type: ignore[attr-defined]
        _saved_tempfile = None
        while _added:
            where, stand_in = _added.pop()
            where.discard(stand_in)


def _advertise() -> None:
    """`os.supports_*` name the stand-ins too, as they accept what the originals do
    (`shutil` and `pathlib` ask before passing `dir_fd` or `follow_symlinks`)."""
    if not _advertised:
        for name in _SUPPORTS:
            where = getattr(os, name, None)
            if isinstance(where, set):
                _advertised.extend((where, fake) for real, fake in _stand_ins() if real in where)
    for where, stand_in in _advertised:
        if stand_in not in where:
            where.add(stand_in)
            _added.append((where, stand_in))


_advertised: list[tuple[set[Any], object]] = []  # where each stand-in is advertised
_cached: list[tuple[object, object]] = []


def _stand_ins() -> list[tuple[object, object]]:
    if not _cached:
        _cached.extend(_pairs())
    return _cached


_checks.install(node_files)
_providers.register(__name__, _stand_ins, keeps=(_cached,), bind=bind, spares=("posix", "_io"))
