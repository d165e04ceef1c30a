"""The disk's own rules (issue 22): break one through the internals and the
run fails with a SimulatorBug that names the rule and the seed.

Each test corrupts simulator state a user's program cannot reach (the page
cache or the synced image of the model, the tear model, a handle's epoch, a
backend's answer) and then does something ordinary; the contract that states
the rule must catch it. A user's own mistakes (a closed file, a stale
handle) stay user errors: the last tests show them unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from _disknode import Node

from seedbed import fs
from seedbed.errors import SimulatorBug
from seedbed.fs._model import FileNode
from seedbed.fs._simdisk import SimFile
from seedbed.fs._tear import Tearer

SEED = 23


def broken_rule(node: Node, work: Callable[[], Coroutine[Any, Any, Any]], rule: str) -> None:
    """Run `work` on the node; it must fail with the SimulatorBug for `rule`, with the seed."""
    with pytest.raises(SimulatorBug) as caught:
        node.run(work())
    assert rule in str(caught.value)
    assert caught.value.seed == SEED
    assert caught.value.replay


async def open_file(path: str = "/f") -> SimFile:
    file = await fs.open(path, "w+")
    assert isinstance(file, SimFile)
    return file


def crash_inside(node: Node) -> Callable[[], Coroutine[Any, Any, None]]:
    """The disk crashes inside the run, where a broken rule is stamped with the seed."""

    async def crash() -> None:
        node.disk.crash()

    return crash


# -- _model ----------------------------------------------------------------------


def test_a_page_cache_that_drifts_from_the_writes_is_found_at_the_crash() -> None:
    node = Node(SEED)

    async def work() -> None:
        file = await open_file()
        await file.write(b"hello world")
        await file.fsync()
        await fs.fsync_dir("/")  # the name survives the crash, so the file is checked
        file.node.data[0] ^= 1  # the page cache no longer holds what was written
        node.disk.crash()

    broken_rule(node, work, "synced bytes change only by fsync")


def test_a_synced_image_that_grew_on_its_own_fails_the_next_fsync() -> None:
    node = Node(SEED)

    async def work() -> None:
        file = await open_file()
        await file.write(b"hello")
        await file.fsync()
        file.node.durable += b"junk" * 10  # bytes on the platter nobody wrote
        await file.write(b" world")
        await file.fsync()

    broken_rule(node, work, "an fsync makes durable exactly what reads show")


def test_a_synced_byte_that_changed_on_its_own_is_found_at_the_crash() -> None:
    node = Node(SEED)
    kept: list[FileNode] = []

    async def work() -> None:
        await fs.write_file("/f", b"synced bytes", durable=True)
        async with await fs.open("/f", "a") as file:
            await file.write(b" and unsynced ones")
            assert isinstance(file, SimFile)
            kept.append(file.node)

    node.run(work())
    kept[0].durable[3] ^= 1  # the synced image, changed behind the model's back
    broken_rule(node, crash_inside(node), "synced bytes change only by fsync")


def test_a_misdirected_write_is_the_disks_own_fault_and_breaks_no_rule() -> None:
    """The image rules stand aside where the disk diverged the images itself."""
    node = Node(SEED, fs.DiskConfig(misdirect_write_probability=1.0))

    async def work() -> bytes:
        file = await open_file()
        await file.write(b"a" * 1500)
        await file.fsync()
        await file.write(b"b" * 100)  # unsynced, and misdirected too
        return bytes(file.node.durable)

    durable = node.run(work())
    assert node.disk.fault_counts["misdirect_write"] == 2
    assert durable != b"a" * 1500  # landed elsewhere, and no SimulatorBug
    node.run(crash_inside(node)())  # nor at the crash


def test_a_failed_fsync_is_the_disks_own_fault_and_breaks_no_rule() -> None:
    node = Node(SEED, fs.DiskConfig(fsync_error_probability=1.0))

    async def work() -> None:
        await fs.write_file("/f", b"")  # the name, not yet durable: fsync the directory
        await fs.fsync_dir("/")
        file = await fs.open("/f", "r+")
        await file.write(b"never on the platter")
        with pytest.raises(OSError):
            await file.fsync()  # the user hears of it; the disk recorded it
        node.disk.crash()  # inside the run: a broken rule would fail it

    node.run(work())
    assert node.disk.fault_counts["fsync_error"] == 1
    assert node.read() == b""


class ChangesSyncedBytes:
    """A tear model that flips the first synced byte of every file it settles."""

    def settle(self, file: FileNode) -> bytearray:
        contents = bytearray(file.durable)
        contents[0] ^= 0xFF
        return contents


def test_a_tear_model_that_changes_a_synced_file_is_a_simulator_bug() -> None:
    node = Node(SEED)
    node.run(fs.write_file("/f", b"synced", durable=True))
    node.disk._tearer = ChangesSyncedBytes()  # type: ignore[assignment]
    broken_rule(node, crash_inside(node), "a file with nothing unsynced survives a crash as synced")


def test_a_tear_model_that_changes_synced_bytes_no_write_touched_is_a_simulator_bug() -> None:
    node = Node(SEED)
    node.run(fs.write_file("/f", b"synced bytes", durable=True))

    async def append() -> None:
        async with await fs.open("/f", "a") as file:
            await file.write(b" and more")  # unsynced: the tear model settles it

    node.run(append())
    node.disk._tearer = ChangesSyncedBytes()  # type: ignore[assignment]
    broken_rule(node, crash_inside(node), "a crash changes no synced byte")


# -- _tear -----------------------------------------------------------------------


class TooLong(Tearer):
    """The sector model, but a cut-back length ends past the written extent."""

    def _length(self, path: str, *, full: int, cut: int) -> int:
        return full + 7


def test_a_torn_length_beyond_what_was_written_is_a_simulator_bug() -> None:
    node = Node(SEED, fs.DiskConfig(torn_sector_probability=1.0))
    node.run(fs.write_file("/f", b"x" * 600, durable=True))

    async def append() -> None:
        async with await fs.open("/f", "a") as file:
            await file.write(b"y" * 600)

    node.run(append())
    disk = node.disk
    disk._tearer = TooLong(disk._stream, disk.config, disk.name, disk._permit, disk.fault_counts)
    broken_rule(node, crash_inside(node), "a torn file's length lies between")


# -- _simdisk ----------------------------------------------------------------------


def test_a_handle_that_outlives_its_file_is_a_simulator_bug() -> None:
    node = Node(SEED)
    kept: list[SimFile] = []

    async def open_unsynced() -> None:
        kept.append(await open_file("/gone"))  # its name never fsynced: lost at a crash

    node.run(open_unsynced())
    node.crash()
    file = kept[0]
    file.epoch = node.disk.crashes  # a forged epoch: the handle passes for a live one

    async def write() -> None:
        await file.write(b"into a node the disk no longer holds")

    broken_rule(node, write, "a file opened before a crash does nothing on the disk")


# -- _file -------------------------------------------------------------------------


def test_a_backend_that_returns_more_than_asked_is_a_simulator_bug() -> None:
    node = Node(SEED)

    async def work() -> None:
        file = await open_file()
        await file.write(b"0123456789")
        file.seek(0)

        async def generous(offset: int, n: int) -> bytes:
            return b"x" * (n + 1)

        file._read_at = generous  # type: ignore[method-assign]
        await file.read(4)

    broken_rule(node, work, "a read returns at most what was asked")


# -- what stays a user error ----------------------------------------------------------


def test_a_stale_handle_and_a_closed_file_stay_user_errors() -> None:
    node = Node(SEED)
    kept: list[SimFile] = []

    async def open_one() -> None:
        kept.append(await open_file())
        await kept[0].close()
        with pytest.raises(ValueError, match="closed file"):
            await kept[0].read()

    node.run(open_one())
    node.crash()

    async def use_stale() -> None:
        kept[0].closed = False  # as if the program had kept it open across the crash
        with pytest.raises(OSError, match="before the disk crashed"):
            await kept[0].write(b"late")

    node.run(use_stale())
