"""`File`: the open-file object both backends share, and mode parsing.

The position lives here, in Python, and the backends only read and write at
offsets; so both backends agree on seek, append and read-to-end semantics.

Contracts on what a backend returns: a read returns at most the bytes asked
for, and a write ends where its data ends.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from types import TracebackType

from seedbed._core.contract import broken
from seedbed.errors import UsageError

_MODES = {"r", "r+", "w", "w+", "a", "a+", "x", "x+"}


@dataclass(frozen=True)
class Mode:
    """What an `open` mode means: bytes-only subsets of Python's modes."""

    text: str
    readable: bool
    writable: bool
    create: bool  # create the file if missing
    exclusive: bool  # fail if it exists
    truncate: bool
    append: bool  # every write goes to the end


def parse_mode(mode: str) -> Mode:
    """Parse "r", "r+", "w", "w+", "a", "a+", "x", "x+" ("b" allowed and ignored)."""
    if not isinstance(mode, str):
        raise UsageError(f"seedbed.fs.open: mode must be a str, got {mode!r}")
    if "t" in mode or mode.count("b") > 1:
        raise UsageError(f"seedbed.fs.open: files are bytes only, got mode {mode!r}")
    base = mode.replace("b", "")
    if base not in _MODES:
        raise UsageError(
            f"seedbed.fs.open: mode must be one of r, r+, w, w+, a, a+, x, x+, got {mode!r}"
        )
    kind, plus = base[0], base.endswith("+")
    return Mode(
        text=mode,
        readable=kind == "r" or plus,
        writable=kind != "r" or plus,
        create=kind != "r",
        exclusive=kind == "x",
        truncate=kind == "w",
        append=kind == "a",
    )


class File:
    """An open file. Created by `seedbed.fs.open`; use `async with` or `await close()`.

    Reads and writes move the position like Python's binary files; in "a"
    modes every write goes to the end. Data written is visible to reads at
    once, and durable only after `fsync()` (see the `seedbed.fs` docstring).
    """

    def __init__(self, path: str, mode: Mode) -> None:
        self.path = path
        self.mode = mode.text
        self._mode = mode
        self._position = 0
        self.closed = False

    # -- what backends provide ------------------------------------------------

    async def _read_at(self, offset: int, n: int) -> bytes:
        raise NotImplementedError

    async def _write_at(self, offset: int | None, data: bytes) -> int:
        """Write at `offset` (None: at the end); returns the offset just past the data."""
        raise NotImplementedError

    async def _size(self) -> int:
        raise NotImplementedError

    async def _truncate(self, size: int) -> None:
        raise NotImplementedError

    async def _fsync(self) -> None:
        raise NotImplementedError

    async def _close(self) -> None:
        raise NotImplementedError

    # -- the public API -------------------------------------------------------

    async def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes from the position (all the rest if n < 0); b"" at the end."""
        self._check(readable=True)
        data = await self._read_at(self._position, n)
        if len(data) > n >= 0:
            broken("a read returns at most what was asked", asked=n, got=len(data))
        self._position += len(data)
        return data

    async def pread(self, n: int, offset: int) -> bytes:
        """Up to `n` bytes at `offset`; the position does not move."""
        self._check(readable=True)
        _check_offset(offset)
        data = await self._read_at(offset, n)
        if len(data) > n >= 0:
            broken("a read returns at most what was asked", asked=n, got=len(data))
        return data

    async def write(self, data: bytes) -> int:
        """Write all of `data` at the position (at the end in "a" modes); returns len(data)."""
        self._check(writable=True)
        payload = _bytes(data)
        offset = None if self._mode.append else self._position
        end = await self._write_at(offset, payload)
        if end < len(payload) or (offset is not None and end != offset + len(payload)):
            broken("a write ends where its data ends", offset=offset, end=end, size=len(payload))
        self._position = end
        return len(payload)

    async def append(self, data: bytes) -> int:
        """Write all of `data` at the end of the file, in any writable mode; returns len(data)."""
        self._check(writable=True)
        payload = _bytes(data)
        self._position = await self._write_at(None, payload)
        return len(payload)

    async def pwrite(self, data: bytes, offset: int) -> int:
        """Write all of `data` at `offset`; the position does not move. Returns len(data)."""
        self._check(writable=True)
        _check_offset(offset)
        payload = _bytes(data)
        await self._write_at(offset, payload)
        return len(payload)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """Move the position (SEEK_SET, SEEK_CUR; for SEEK_END use `await size()`)."""
        self._check()
        if whence == os.SEEK_SET:
            target = offset
        elif whence == os.SEEK_CUR:
            target = self._position + offset
        else:
            raise UsageError("File.seek: whence must be SEEK_SET or SEEK_CUR (SEEK_END: size())")
        _check_offset(target)
        self._position = target
        return target

    def tell(self) -> int:
        """The position."""
        return self._position

    async def size(self) -> int:
        """The file's size, as reads see it."""
        self._check()
        return await self._size()

    async def truncate(self, size: int) -> None:
        """Cut (or zero-extend) the file to `size` bytes. Durable after fsync()."""
        self._check(writable=True)
        _check_offset(size)
        await self._truncate(size)

    async def fsync(self) -> None:
        """Make everything written to this file so far durable (not its name: see fsync_dir)."""
        self._check()
        await self._fsync()

    async def close(self) -> None:
        """Close the file (no implicit fsync). Closing twice is allowed."""
        if not self.closed:
            self.closed = True
            await self._close()

    async def __aenter__(self) -> File:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = " closed" if self.closed else ""
        return f"<{type(self).__name__} {self.path!r} mode={self.mode!r}{state}>"

    def _check(self, *, readable: bool = False, writable: bool = False) -> None:
        if self.closed:
            raise ValueError(f"I/O operation on closed file {self.path!r}")
        if (readable and not self._mode.readable) or (writable and not self._mode.writable):
            need = "reading" if readable else "writing"
            raise OSError(errno.EBADF, f"file not open for {need} (mode {self.mode!r})", self.path)


def _bytes(data: bytes) -> bytes:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"seedbed.fs files take bytes, got {type(data).__name__}")
    return bytes(data)


def _check_offset(offset: int) -> None:
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise UsageError(f"seedbed.fs: offsets and sizes are ints >= 0, got {offset!r}")
