"""Opening the files seedbed reads and replacing the ones it writes, safely.

A reader handed `/dev/zero`, a FIFO or a terminal would read forever (or
block in `open` waiting for a writer), so every reader asks `regular_file`
first: it `stat`s the path without opening it and refuses anything but a
regular file, in one line naming the path. Writers go through
`replace_file`: the data goes to a temporary file in the same folder, which
is renamed over the target only if the target is absent or a regular file,
so a symlink, FIFO or device at the path is refused, never written through
(as root, `report --html /dev/full` used to replace the device). Standard
library only (and seedbed's errors): `seedbed.check` reads histories through it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO, Any, BinaryIO

from seedbed.errors import UsageError

MAX_LINE = 1 << 20  # bytes a reader takes from one line; seedbed writes far shorter ones


class NotRegular(OSError):
    """The path is not a regular file; `str()` is the one-line reason."""

    def __str__(self) -> str:
        return str(self.args[0])


class WriteFailed(OSError):
    """A file seedbed writes could not be written (a full disk, a quota, a
    read-only folder); `str()` is one line naming the file, the reason and
    what to do. Whatever was written of it has been removed."""

    def __init__(self, path: str | Path, what: str, cause: OSError) -> None:
        reason = cause.strerror or str(cause)
        super().__init__(
            f"cannot write {what} {path}: {reason}; nothing was written there: "
            "make room (or fix the folder), then run again"
        )
        self.errno = cause.errno
        self.filename = str(path)

    def __str__(self) -> str:
        return str(self.args[0])


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def is_regular(path: str | Path) -> bool:
    """Whether `path` is a regular file itself (a symlink is not)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def regular_file(path: str | Path) -> None:
    """Refuse (`NotRegular`) a path that exists and is not a regular file.

    Symlinks are followed for reading (a results file may be linked in);
    a missing path is left to the caller's own "no such file" message.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegular(f"{path} is {_kind(mode)}, not a regular file: pass a file seedbed wrote")


def open_regular(path: str | Path) -> BinaryIO:
    """`path` opened for reading in binary, if it is a regular file (`NotRegular` if not).

    `regular_file` refuses before opening; the open itself does not block (a
    FIFO put there in between would wait for a writer) and what it opened is
    checked again, so the answer holds for the file actually read.
    """
    regular_file(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(
                f"{path} is {_kind(mode)}, not a regular file: pass a file seedbed wrote"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def replaceable(path: str | Path) -> None:
    """Refuse (`NotRegular`) a path a writer must not rename over: anything that
    exists and is not a regular file (a symlink, FIFO, device, directory)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegular(f"{path} is {_kind(mode)}: seedbed only replaces regular files")


def writable(path: str | Path, flag: str) -> None:
    """Refuse (a one-line `UsageError` naming `flag`) an output path seedbed would
    have to write through or rename over: a symlink, FIFO, device or folder."""
    try:
        replaceable(path)
    except NotRegular as exc:
        raise UsageError(f"{exc}; pass {flag} a path to a new or regular file") from None


class Replacement:
    """A file written beside `path` (as `.NAME.partial`) and renamed over it by `commit`.

    Whoever reads `path` meanwhile sees the old file or none, never a half-written
    one; a writer that fails or is interrupted calls `discard`, and `path` is left
    as it was. Refuses (`NotRegular`) a `path` that is a symlink, FIFO, device or
    folder: renaming over it would destroy what it is, writing into it would write
    through it (or block on a FIFO). A killed writer leaves only the `.partial`.
    """

    def __init__(self, path: str | Path, *, text: bool = False) -> None:
        self.target = Path(path)
        replaceable(self.target)
        self.temporary = self.target.with_name(f".{self.target.name}.partial")
        self.temporary.unlink(
            missing_ok=True
        )  # a leftover (even a symlink) is removed, not followed
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.temporary, flags, 0o644)
        try:
            self.file: IO[Any] = (
                os.fdopen(fd, "w", encoding="utf-8") if text else os.fdopen(fd, "wb")
            )
        except BaseException:
            os.close(fd)
            self.temporary.unlink(missing_ok=True)
            raise

    def commit(self) -> None:
        """Close the file (its last bytes reach the disk here) and rename it into place;
        on any error the temporary file is removed and `path` left as it was."""
        try:
            self.file.close()
            replaceable(self.target)  # still not a FIFO or device someone put there meanwhile
            os.replace(self.temporary, self.target)
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Drop what was written; `path` is left as it was."""
        with contextlib.suppress(OSError):  # a full disk cannot take the buffer: it goes
            self.file.close()
        self.temporary.unlink(missing_ok=True)


def replace_file(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder, renamed into place.

    Refuses (`NotRegular`) when `path` is a symlink, FIFO, device or anything
    but a regular file: renaming over it would destroy what it is.
    """
    replacement = Replacement(path)
    try:
        replacement.file.write(data)
    except BaseException:
        replacement.discard()
        raise
    replacement.commit()
