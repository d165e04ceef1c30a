"""`open()` inside a node: the standard library's file objects over a node's disk.

`open_file` is `io.open` for a node's process: it checks its arguments as
`io.open` does, opens a descriptor through `NodeFiles` (a simulated one, or
a real one for a real file only read) and stacks the standard library's own
`BufferedReader`/`BufferedWriter`/`BufferedRandom` and `TextIOWrapper` on
a raw file, so buffering, newlines and encodings behave exactly as in
production. What the buffer holds is the process's memory: a crash before a
flush loses it, a flush hands it to the disk (volatile until fsync).
"""

from __future__ import annotations

import _io
import errno
import io
import os
import warnings
from typing import Any

from seedbed.fs._posix import DIR, NodeFiles
from seedbed.fs._stat import BLOCK_SIZE

_FLAGS = {
    "r": os.O_RDONLY,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}
_RAW_MODES = {"r": "rb", "w": "wb", "x": "xb", "a": "ab"}  # what FileIO.mode says


class SimFileIO(io.RawIOBase):
    """A raw file on a node's disk: `io.FileIO`'s behaviour over a simulated descriptor."""

    def __init__(self, files: NodeFiles, fd: int, name: Any, mode: str, closefd: bool) -> None:
        super().__init__()
        self._files = files
        self._fd = fd
        self.name = name
        self.mode = mode
        self.closefd = closefd
        handle = files.handle(fd)
        self._readable, self._writable = handle.readable, handle.writable

    def __repr__(self) -> str:
        if self.closed:
            return "<seedbed.SimFileIO [closed]>"
        return f"<seedbed.SimFileIO name={self.name!r} mode={self.mode!r} closefd={self.closefd}>"

    def _open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed file")

    def readable(self) -> bool:
        self._open()
        return self._readable

    def writable(self) -> bool:
        self._open()
        return self._writable

    def seekable(self) -> bool:
        self._open()
        return True

    def isatty(self) -> bool:
        self._open()
        return False

    def fileno(self) -> int:
        self._open()
        return self._fd

    def readinto(self, buffer: Any) -> int:
        self._open()
        view = memoryview(buffer).cast("B")
        data = self._files.read(self._fd, len(view))
        view[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        """The rest of the file: one read of what is left, and one more that finds the end."""
        self._open()
        left = max(self._files.fstat(self._fd).st_size - self.tell(), 0)
        chunks: list[bytes] = []
        while True:
            chunk = self._files.read(self._fd, max(left, io.DEFAULT_BUFFER_SIZE))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            left = 0

    def read(self, size: int = -1) -> bytes:
        self._open()
        if size is None or size < 0:
            return self.readall()
        return self._files.read(self._fd, size)

    def write(self, data: Any) -> int:
        self._open()
        if not self._files.ref.alive:
            # A crashed process's buffer, flushed as its file object is collected
            # (or by the rest of a callback an operation crash cut): it never
            # reaches the disk, and an error here would only surface where the
            # collection happens to run.
            return memoryview(data).nbytes
        return self._files.write(self._fd, data)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._open()
        return self._files.lseek(self._fd, offset, whence)

    def tell(self) -> int:
        self._open()
        return self._files.lseek(self._fd, 0, os.SEEK_CUR)

    def truncate(self, size: int | None = None) -> int:
        self._open()
        if size is None:
            size = self.tell()
        self._files.ftruncate(self._fd, size)
        return size

    def close(self) -> None:
        if self.closed:
            return
        try:
            super().close()
        finally:
            if self.closefd:
                self._files.fds.pop(self._fd, None)  # a dead process's close changes nothing


def check_mode(mode: Any) -> tuple[str, bool]:
    """`io.open`'s checks of a mode: (its kind, "r" "w" "x" or "a"; binary)."""
    if not isinstance(mode, str):
        raise TypeError(f"open() argument 'mode' must be str, not {type(mode).__name__}")
    kinds = [c for c in "rwxa" if c in mode]
    if set(mode) - set("rwxab+t") or len(set(mode)) != len(mode):
        raise ValueError(f"invalid mode: {mode!r}")
    if len(kinds) != 1:
        raise ValueError("must have exactly one of create/read/write/append mode")
    if "t" in mode and "b" in mode:
        raise ValueError("can't have text and binary mode at once")
    return kinds[0], "b" in mode


def open_file(
    files: NodeFiles,
    file: Any,
    mode: str = "r",
    buffering: int = -1,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
    closefd: bool = True,
    opener: Any = None,
) -> Any:
    """`io.open` in a node's process (see the module docstring)."""
    kind, binary = check_mode(mode)
    _check_text_options(binary, buffering, encoding, errors, newline)
    if not isinstance(file, int):
        os.fspath(file)  # TypeError for what is no path, as io.open
        if not closefd:
            raise ValueError("Cannot use closefd=False with file name")
    plus = "+" in mode
    flags = (_FLAGS[kind] & ~os.O_ACCMODE) | (os.O_RDWR if plus else _FLAGS[kind] & os.O_ACCMODE)
    flags |= getattr(os, "O_CLOEXEC", 0)
    if isinstance(file, int):
        fd = file
    elif opener is not None:
        fd = opener(file, flags)
    else:
        fd = files.open(file, flags, 0o666)
    raw = _raw(files, fd, file, kind, plus, closefd)
    try:
        return _stack(raw, mode, binary, kind, buffering, encoding, errors, newline)
    except BaseException:
        raw.close()
        raise


def _check_text_options(
    binary: bool, buffering: int, encoding: Any, errors: Any, newline: Any
) -> None:
    if binary:
        for name, value in (("an encoding", encoding), ("an errors", errors),
                            ("a newline", newline)):  # fmt: skip
            if value is not None:
                raise ValueError(f"binary mode doesn't take {name} argument")
        if buffering == 1:
            warnings.warn(
                "line buffering (buffering=1) isn't supported in binary mode, "
                "the default buffer size will be used", RuntimeWarning, stacklevel=4,
            )  # fmt: skip
    elif buffering == 0:
        raise ValueError("can't have unbuffered text I/O")


def _raw(files: NodeFiles, fd: int, name: Any, kind: str, plus: bool, closefd: bool) -> Any:
    """A raw file on the descriptor: simulated, or a real read-only one (`_io.FileIO`)."""
    raw_mode = ("rb+" if kind == "w" else _RAW_MODES[kind] + "+") if plus else _RAW_MODES[kind]
    if fd not in files.fds:  # a real file only read, or the process's own output
        raw = _io.FileIO(fd, "r+" if plus else "r" if kind == "r" else "w", closefd=closefd)
        raw.name = name
        return raw
    if files.fds[fd].kind == DIR:
        if closefd:
            files.close(fd)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    simulated = SimFileIO(files, fd, name, raw_mode, closefd)
    if kind == "a":
        simulated.seek(0, os.SEEK_END)  # as FileIO: tell() starts at the end
    return simulated


def _stack(
    raw: Any, mode: str, binary: bool, kind: str, buffering: int,
    encoding: Any, errors: Any, newline: Any,
) -> Any:  # fmt: skip
    line_buffering = buffering == 1 or (buffering < 0 and raw.isatty())
    if buffering == 1 or buffering < 0:
        buffering = BLOCK_SIZE if isinstance(raw, SimFileIO) else raw._blksize
    if buffering == 0:
        return raw
    if "+" in mode:
        buffer: Any = io.BufferedRandom(raw, buffering)
    elif kind == "r":
        buffer = io.BufferedReader(raw, buffering)
    else:
        buffer = io.BufferedWriter(raw, buffering)
    if binary:
        return buffer
    text = io.TextIOWrapper(buffer, encoding, errors, newline, line_buffering)
    text.mode = mode  # type: ignore[misc]
    return text
