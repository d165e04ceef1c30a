"""The production twin: real files through plain blocking os calls.

Paths are used as given, like `open()`: relative paths are relative to the
process's working directory, so the "data directory" is whatever directory
the program passes in. Calls run inline (disk calls are short; a thread
would buy nothing for the workloads this serves and would cost determinism
nowhere else). `os.fsync` on the file and on an `O_DIRECTORY` descriptor of
the directory are the real barriers the durability model describes.
"""

from __future__ import annotations

import errno
import os
import stat

from seedbed.fs._file import File, Mode


class RealFile(File):
    """A real file, read and written by offset through its descriptor."""

    def __init__(self, fd: int, path: str, mode: Mode) -> None:
        super().__init__(path, mode)
        self.fd = fd

    async def _read_at(self, offset: int, n: int) -> bytes:
        if n < 0:
            n = max(os.fstat(self.fd).st_size - offset, 0)
        chunks: list[bytes] = []
        while n > 0:
            chunk = os.pread(self.fd, n, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    async def _write_at(self, offset: int | None, data: bytes) -> int:
        if offset is None:
            offset = os.fstat(self.fd).st_size
        view = memoryview(data)
        while view:
            written = os.pwrite(self.fd, view, offset)
            view = view[written:]
            offset += written
        return offset

    async def _size(self) -> int:
        return os.fstat(self.fd).st_size

    async def _truncate(self, size: int) -> None:
        os.ftruncate(self.fd, size)

    async def _fsync(self) -> None:
        os.fsync(self.fd)

    async def _close(self) -> None:
        os.close(self.fd)


class RealBackend:
    """seedbed.fs outside a simulation."""

    async def open(self, path: str | os.PathLike[str], mode: Mode) -> RealFile:
        text = _path(path)
        flags = os.O_RDWR if mode.readable and mode.writable else os.O_WRONLY
        if not mode.writable:
            flags = os.O_RDONLY
        if mode.create:
            flags |= os.O_CREAT
        if mode.exclusive:
            flags |= os.O_EXCL
        if mode.truncate:
            flags |= os.O_TRUNC
        fd = os.open(text, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
        if stat.S_ISDIR(os.fstat(fd).st_mode):  # POSIX opens a directory read-only; we refuse
            os.close(fd)
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), text)
        return RealFile(fd, text, mode)

    async def rename(self, src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        os.rename(_path(src), _path(dst))

    async def remove(self, path: str | os.PathLike[str]) -> None:
        os.remove(_path(path))

    async def rmdir(self, path: str | os.PathLike[str]) -> None:
        os.rmdir(_path(path))

    async def mkdir(
        self, path: str | os.PathLike[str], *, exist_ok: bool = False, parents: bool = False
    ) -> None:
        text = _path(path)
        if parents:
            os.makedirs(text, exist_ok=exist_ok)
            return
        try:
            os.mkdir(text)
        except FileExistsError:
            if not (exist_ok and os.path.isdir(text)):
                raise

    async def listdir(self, path: str | os.PathLike[str]) -> list[str]:
        return sorted(os.listdir(_path(path)))

    async def exists(self, path: str | os.PathLike[str]) -> bool:
        return os.path.exists(_path(path))

    async def fsync_dir(self, path: str | os.PathLike[str]) -> None:
        fd = os.open(_path(path), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _path(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"seedbed.fs paths are str or PathLike[str], got {path!r}")
    return text
