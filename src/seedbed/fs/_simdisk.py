"""`SimDisk`: one node's simulated disk: latency, faults and crashes over `DiskModel`.

Every choice is drawn from the disk's entropy stream with a label naming the
disk, the fault and the path ("disk n1 torn /wal sector 3"), so the trace
says what the disk did. With the default `DiskConfig` the only draws are the
tears at a crash (`_tear`). Operations take effect after their latency; one in flight when the
disk crashes takes no effect and raises OSError(EIO), and so does any use of
a file opened before the crash.

Contracts: a file opened before a crash does nothing on the disk: no handle
`_io` lets through reaches a node the crash dropped (a stale handle's use is
the user's: OSError(EIO));
a misdirected write lands at the same offset within another sector, and a
corrupt read flips one bit inside what was read.
"""

from __future__ import annotations

import asyncio
import errno
import os
import posix
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from seedbed._core.contract import broken, require
from seedbed._core.entropy import Stream
from seedbed.errors import UsageError
from seedbed.fs._config import DiskConfig
from seedbed.fs._coordinator import FaultCoordinator
from seedbed.fs._file import File, Mode
from seedbed.fs._model import DiskModel, FileNode, Parts, join, oserror, split_path
from seedbed.fs._tear import Tearer

T = TypeVar("T")
_WATCHED = ("fsync", "write", "rename")  # the disk operations a crash can be armed at


class Handle(Protocol):
    """What the data operations need of an open file: both doors' files have it."""

    node: FileNode
    path: str
    epoch: int


FAULT_KINDS = (
    "read_error",
    "write_error",
    "fsync_error",
    "corrupt_read",
    "misdirect_write",
    "torn_write",
    "torn_sector",
)


class SimDisk:
    """A node's disk in a simulation. Kept across the node's crashes and restarts.

    `stream` supplies every draw; `name` (default: the stream's name) labels
    draws and identifies the disk to `coordinator`, which is required when
    `config.spare_one_replica` is set. `fault_counts` counts the damage and
    errors injected so far, by kind (see FAULT_KINDS), plus "vetoed": damage
    drawn but refused by the coordinator. "torn_write" counts files a crash
    left with sectors lacking their new bytes inside the file, "torn_sector"
    those sectors.
    """

    def __init__(
        self,
        stream: Stream,
        config: DiskConfig | None = None,
        *,
        name: str | None = None,
        coordinator: FaultCoordinator | None = None,
    ) -> None:
        self.config = config if config is not None else DiskConfig()
        self.name = name if name is not None else stream.name
        self._stream = stream
        self._model = DiskModel()
        self._epoch = 0  # bumped by every crash: handles and operations from before are stale
        self._labels: dict[str, str] = {}  # the latency draw's label, by operation
        self.fault_counts: dict[str, int] = dict.fromkeys((*FAULT_KINDS, "vetoed"), 0)
        self._coordinator: FaultCoordinator | None = None
        if self.config.spare_one_replica:
            if coordinator is None:
                raise UsageError(
                    "SimDisk: DiskConfig.spare_one_replica needs a FaultCoordinator "
                    "shared by the replicas' disks (coordinator=...)"
                )
            coordinator.register(self.name)
            self._coordinator = coordinator
        # Where the process starts (the real working directory): paths under it are
        # labelled from it, "./data/log", so a program keeping its files in a
        # relative folder draws the same labels, and hashes the same, on every
        # machine and checkout. The Python file API's processes start here too.
        self.home = _working_directory()
        self._home_prefix = "" if self.home == "/" else self.home + "/"
        self._tearer = Tearer(
            stream, self.config, self.name, self._permit, self.fault_counts, self.shown
        )
        # Told of each fsync, write and rename, before and after, while a fault
        # waits for one (`seedbed.world._operations`); None (no cost) otherwise.
        self.observer: Callable[[str, str], object] | None = None

    def __repr__(self) -> str:
        return f"<SimDisk {self.name} crashes={self._epoch}>"

    def shown(self, path: str) -> str:
        """`path` as draws' labels name it: from the home folder when under it."""
        prefix = self._home_prefix
        if prefix and path.startswith(prefix):
            return "./" + path[len(prefix) :]
        return path

    @property
    def crashes(self) -> int:
        """How many times this disk has crashed."""
        return self._epoch

    # -- crash ----------------------------------------------------------------

    def crash(self) -> None:
        """The node lost power: drop every volatile change, tearing unsynced sectors (`_tear`)."""
        self._epoch += 1
        self._model.crash(self._tearer.settle)
        self._files_changed()

    # -- namespace operations ------------------------------------------------
    #
    # Each operation has two doors: `seedbed.fs` awaits it (`open`, `rename`...:
    # its latency on virtual time, then the change), and the Python file API
    # (`_posix`) calls it at once through `now` (its latency blocks the thread).
    # Both end in the same `*_now` core, so one disk has one set of semantics.

    async def open(self, path: str | os.PathLike[str], mode: Mode) -> SimFile:
        parts = split_path(path)
        await self._io("open", join(parts))
        node = self.open_now(parts, create=mode.create, exclusive=mode.exclusive,
                             truncate=mode.truncate)  # fmt: skip
        return SimFile(self, node, join(parts), mode)

    def open_now(self, parts: Parts, *, create: bool, exclusive: bool, truncate: bool) -> FileNode:
        node = self._model.file(parts)
        if node is None:
            if not create:
                raise oserror(errno.ENOENT, join(parts))
            node = self._model.create_file(parts)
            self._files_changed()
        elif exclusive:
            raise oserror(errno.EEXIST, join(parts))
        elif truncate:
            self._model.truncate(node, 0)
        return node

    async def rename(self, src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        src_parts, dst_parts = split_path(src), split_path(dst)
        if self.observer is not None and self.observer("rename", "before"):
            await _halt()
        await self._io("rename", join(src_parts))
        self._model.rename(src_parts, dst_parts)
        if self.observer is not None and self.observer("rename", "after"):
            await _halt()
        self._renamed(src_parts, dst_parts)

    def rename_now(self, src_parts: Parts, dst_parts: Parts) -> None:
        self._model.rename(src_parts, dst_parts)
        self._renamed(src_parts, dst_parts)

    def _renamed(self, src_parts: Parts, dst_parts: Parts) -> None:
        if self._coordinator is not None:
            self._coordinator.renamed(self.name, join(src_parts), join(dst_parts))
            self._files_changed()

    async def remove(self, path: str | os.PathLike[str]) -> None:
        parts = split_path(path)
        await self._io("remove", join(parts))
        self.remove_now(parts)

    def remove_now(self, parts: Parts) -> None:
        self._model.remove(parts)
        self._files_changed()

    async def rmdir(self, path: str | os.PathLike[str]) -> None:
        parts = split_path(path)
        await self._io("rmdir", join(parts))
        self._model.rmdir(parts)

    async def mkdir(
        self, path: str | os.PathLike[str], *, exist_ok: bool = False, parents: bool = False
    ) -> None:
        parts = split_path(path)
        await self._io("mkdir", join(parts))
        for depth in range(1 if parents else len(parts), len(parts) + 1):
            self._mkdir_one(parts[:depth], exist_ok=exist_ok or depth < len(parts))

    def _mkdir_one(self, parts: Parts, *, exist_ok: bool) -> None:
        node = self._model.lookup(parts)
        if node is None:
            self._model.mkdir(parts)
        elif not exist_ok or isinstance(node, FileNode):
            raise oserror(errno.EEXIST, join(parts))

    async def listdir(self, path: str | os.PathLike[str]) -> list[str]:
        parts = split_path(path)
        await self._io("listdir", join(parts))
        return self._model.listdir(parts)

    async def exists(self, path: str | os.PathLike[str]) -> bool:
        parts = split_path(path)
        await self._io("stat", join(parts))
        try:
            return self._model.lookup(parts) is not None
        except NotADirectoryError:
            return False

    async def fsync_dir(self, path: str | os.PathLike[str]) -> None:
        parts = split_path(path)
        await self._io("fsync_dir", join(parts))
        self._model.fsync_dir(parts)

    def sync(self) -> None:
        """Everything written is durable, names and data (`sync()`, or the kernel
        writing its cache back as a process stops while the machine stays up)."""
        self._model.sync_all()

    @property
    def model(self) -> DiskModel:
        """The namespace and contents, for the Python file API's door (`_posix`), which
        changes names through it after `now`; `seedbed.fs` never needs it."""
        return self._model

    def files_changed(self) -> None:
        """Tell the coordinator (if any) that names changed through `model`."""
        self._files_changed()

    # -- file data ------------------------------------------------------------

    async def read_at(self, file: Handle, offset: int, n: int) -> bytes:
        await self._io("read", file.path, file.epoch)
        return self.read_now(file, offset, n)

    def read_now(self, file: Handle, offset: int, n: int) -> bytes:
        if file.node.lost:
            self._stale(file)
        config = self.config  # a zero probability draws nothing: no label to build
        if config.read_error_probability > 0 and self._stream.chance(
            config.read_error_probability, f"disk {self.name} read error {self.shown(file.path)}"
        ):
            self.fault_counts["read_error"] += 1
            raise oserror(errno.EIO, file.path)
        data = self._model.read(file.node, offset, n)
        if (
            data
            and config.corrupt_read_probability > 0
            and self._stream.chance(
                config.corrupt_read_probability,
                f"disk {self.name} corrupt read {self.shown(file.path)}",
            )
        ):
            data = self._corrupt(file.path, offset, data)
        return data

    def _corrupt(self, path: str, offset: int, data: bytes) -> bytes:
        size = self.config.sector_size
        first, last = offset // size, (offset + len(data) - 1) // size
        sector = first + self._stream.below(last - first + 1, f"disk {self.name} corrupt sector")
        if not self._permit(path, [sector]):
            return data
        low = max(offset, sector * size) - offset
        high = min(offset + len(data), (sector + 1) * size) - offset
        index = low + self._stream.below(high - low, f"disk {self.name} corrupt byte")
        bit = self._stream.below(8, f"disk {self.name} corrupt bit")
        require(
            0 <= low <= index < high <= len(data) and 0 <= bit < 8,
            "a corrupt read flips one bit inside what was read",
            path=path, index=index, read=len(data),
        )  # fmt: skip
        self.fault_counts["corrupt_read"] += 1
        damaged = bytearray(data)
        damaged[index] ^= 1 << bit
        return bytes(damaged)

    async def write_at(self, file: Handle, offset: int | None, data: bytes) -> int:
        if self.observer is not None and self.observer("write", "before"):
            await _halt()
        await self._io("write", file.path, file.epoch)
        end = self.write_now(file, offset, data)
        if self.observer is not None and self.observer("write", "after"):
            await _halt()
        return end

    def write_now(self, file: Handle, offset: int | None, data: bytes) -> int:
        if file.node.lost:
            self._stale(file)
        config = self.config  # a zero probability draws nothing: no label to build
        if config.write_error_probability > 0 and self._stream.chance(
            config.write_error_probability, f"disk {self.name} write error {self.shown(file.path)}"
        ):
            self.fault_counts["write_error"] += 1
            raise oserror(errno.EIO, file.path)
        start = len(file.node.data) if offset is None else offset
        if not data:
            return start
        landed = start
        if config.misdirect_write_probability > 0 and self._stream.chance(
            config.misdirect_write_probability,
            f"disk {self.name} misdirect {self.shown(file.path)}",
        ):
            landed = self._misdirect(file, start, len(data))
        self._model.write(file.node, start, data, landed)
        return start + len(data)

    def _misdirect(self, file: Handle, start: int, length: int) -> int:
        """Where a misdirected write lands: the same offset within another sector."""
        size = self.config.sector_size
        first = start // size
        span = (start + length - 1) // size - first + 1
        total = -(-max(len(file.node.data), start + length) // size)  # sectors, rounded up
        k = self._stream.below(total, f"disk {self.name} misdirect sector")
        target = k if k < first else k + 1  # any sector but the one aimed at, or one past the end
        aimed, hit = range(first, first + span), range(target, target + span)
        if not self._permit(file.path, [*aimed, *hit]):
            return start
        self.fault_counts["misdirect_write"] += 1
        landed = start + (target - first) * size
        require(
            landed != start and landed >= 0 and landed % size == start % size,
            "a misdirected write lands at the same offset within another sector",
            aimed=start, landed=landed,
        )  # fmt: skip
        return landed

    async def truncate(self, file: Handle, size: int) -> None:
        await self._io("truncate", file.path, file.epoch)
        self.truncate_now(file, size)

    def truncate_now(self, file: Handle, size: int) -> None:
        if file.node.lost:
            self._stale(file)
        self._model.truncate(file.node, size)

    async def fsync(self, file: Handle) -> None:
        if self.observer is not None and self.observer("fsync", "before"):
            await _halt()
        await self._io("fsync", file.path, file.epoch)
        self.fsync_now(file)
        if self.observer is not None and self.observer("fsync", "after"):
            await _halt()

    def fsync_now(self, file: Handle) -> None:
        if file.node.lost:
            self._stale(file)
        config = self.config  # a zero probability draws nothing: no label to build
        if config.fsync_error_probability > 0 and self._stream.chance(
            config.fsync_error_probability, f"disk {self.name} fsync error {self.shown(file.path)}"
        ):
            self.fault_counts["fsync_error"] += 1
            self._model.lose_pending(file.node)
            raise oserror(errno.EIO, file.path)
        self._model.fsync(file.node)

    def check_live(self, file: Handle) -> None:
        """OSError(EIO) if `file` was opened before the last crash."""
        if file.epoch != self._epoch:
            raise OSError(errno.EIO, "file handle from before the disk crashed", file.path)

    # -- the Python file API's door --------------------------------------------

    def now(self, op: str, path: str, epoch: int | None, action: Callable[[], T]) -> T:
        """Run `action` (a `*_now` core) as a blocking call of the program's: its
        latency blocks the thread (virtual time moves on, every node waits, as
        the one thread they share is held), and an operation crash armed for
        `op` fires here. Before: the node dies, the call has no effect and
        raises OSError(EIO). After: it took effect, the node died, and the call
        returns (a blocking call cannot be made to never return); nothing the
        dead incarnation does after reaches the world."""
        watched = self.observer is not None and op in _WATCHED
        if watched and self.observer is not None and self.observer(op, "before"):
            raise OSError(errno.EIO, f"the node crashed before this {op}", path)
        self._spend(op, path, epoch)
        result = action()
        if watched and self.observer is not None:
            self.observer(op, "after")
        return result

    def _spend(self, op: str, path: str, epoch: int | None) -> None:
        """`_io` for a blocking call: the latency is drawn and blocks the loop's thread."""
        if epoch is not None and epoch != self._epoch:
            raise OSError(errno.EIO, "file handle from before the disk crashed", path)
        delay = self._latency(op)
        if delay > 0:
            driver = getattr(asyncio.events._get_running_loop(), "driver", None)
            if driver is not None:
                driver.block(delay)

    def _latency(self, op: str) -> float:
        """The operation's latency, drawn (no draw when the config fixes it)."""
        low, high = self.config.latency_min, self.config.latency_max
        if high <= 0:
            return 0.0
        label = self._labels.get(op)
        if label is None:  # one string per operation kind: its hash is computed once
            label = self._labels[op] = f"disk {self.name} {op}"
        return low if low == high else self._stream.uniform(low, high, label)

    # -- helpers --------------------------------------------------------------

    @staticmethod
    def _stale(file: Handle) -> None:
        """A handle `_io` let through reaches a node a crash dropped."""
        broken("a file opened before a crash does nothing on the disk", path=file.path)

    async def _io(self, op: str, path: str, epoch: int | None = None) -> None:
        """Spend the operation's latency; refuse it if the disk crashed meanwhile."""
        started = self._epoch if epoch is None else epoch
        if started != self._epoch:
            raise OSError(errno.EIO, "file handle from before the disk crashed", path)
        if self.config.latency_max > 0:
            delay = self._latency(op)
            # On the world's exact clock: I/O completes when it completes, whatever
            # clock resolution the program's timers see. The driver's exact sleep
            # without its coroutine, once per disk operation: one frame fewer to
            # make and to resume.
            driver = getattr(asyncio.get_running_loop(), "driver", None)
            if driver is None or not delay > 0:  # any other loop sleeps; 0 yields
                await asyncio.sleep(delay)
            else:
                waiter, timer = driver.exact_waiter(delay)
                try:
                    await waiter
                except BaseException:  # cancelled first: the timer must not fire
                    timer.cancel()
                    raise
            if started != self._epoch:
                raise OSError(errno.EIO, f"disk crashed during {op}", path)

    def _files_changed(self) -> None:
        if self._coordinator is not None:
            self._coordinator.files_changed(self.name, self._model.file_paths())

    def _permit(self, path: str, sectors: range | list[int]) -> bool:
        if self._coordinator is None or self._coordinator.permit(self.name, path, sectors):
            return True
        self.fault_counts["vetoed"] += 1
        return False


def _working_directory() -> str:
    """The real working directory ("/" if it was removed under the process)."""
    try:
        return posix.getcwd()
    except OSError:
        return "/"


async def _halt() -> None:
    """Never return: the node crashed at this operation (`world._operations`); its
    buried task waits here until the world closes it, as at any other crash."""
    await asyncio.get_running_loop().create_future()


class SimFile(File):
    """A file open on a `SimDisk`."""

    def __init__(self, disk: SimDisk, node: FileNode, path: str, mode: Mode) -> None:
        super().__init__(path, mode)
        self.disk = disk
        self.node = node
        self.epoch = disk.crashes

    # The data operations hand back the disk's coroutine rather than awaiting it
    # in one of their own: one frame less per operation to create and resume.

    def _read_at(self, offset: int, n: int) -> Coroutine[Any, Any, bytes]:
        return self.disk.read_at(self, offset, n)

    def _write_at(self, offset: int | None, data: bytes) -> Coroutine[Any, Any, int]:
        return self.disk.write_at(self, offset, data)

    async def _size(self) -> int:
        self.disk.check_live(self)
        if self.node.lost:
            self.disk._stale(self)
        return len(self.node.data)

    async def _truncate(self, size: int) -> None:
        await self.disk.truncate(self, size)

    def _fsync(self) -> Coroutine[Any, Any, None]:
        return self.disk.fsync(self)

    async def _close(self) -> None:
        return None
