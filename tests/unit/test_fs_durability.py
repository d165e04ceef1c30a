"""seedbed.fs on a simulated disk: what survives a crash, exactly as the docstring promises.

A "node" here is a NodeRef with a SimDisk run on a SeedbedLoop, no
Simulation: a crash is `disk.crash()` and a new incarnation with the same disk.
"""

from __future__ import annotations

import asyncio
import errno

import pytest
from _disknode import Node, pwrite

from seedbed import fs
from seedbed._core.identity import new_node_context

SECTOR = 512
PREFIX = fs.DiskConfig(tear_model="prefix")  # seedbed 0.1's crash: only a last write's prefix


async def durable_empty(path: str) -> None:
    await fs.write_file(path, b"", durable=True)


def test_prefix_model_fsynced_writes_survive_and_an_unsynced_one_only_whole_or_not() -> None:
    outcomes = set()
    for seed in range(30):
        node = Node(seed, PREFIX)
        node.run(durable_empty("/f"))
        node.run(pwrite("/f", b"A" * 100, 0, sync=True))
        node.run(pwrite("/f", b"B" * 100, 100))  # inside one sector: cannot tear
        assert node.files()["f"] == b"A" * 100 + b"B" * 100  # reads see unsynced data
        node.crash()
        after = node.files()["f"]
        assert after in (b"A" * 100, b"A" * 100 + b"B" * 100)
        outcomes.add(after)
    assert len(outcomes) == 2


def test_prefix_model_loses_earlier_unsynced_writes_even_when_the_last_one_persists() -> None:
    outcomes = set()
    for seed in range(30):
        node = Node(seed, PREFIX)
        node.run(durable_empty("/f"))
        node.run(pwrite("/f", b"1" * SECTOR, 0))
        node.run(pwrite("/f", b"2" * SECTOR, SECTOR))
        node.crash()
        after = node.files()["f"]
        assert after in (b"", bytes(SECTOR) + b"2" * SECTOR)
        outcomes.add(after)
    assert len(outcomes) == 2


def test_prefix_model_drops_a_truncation_as_the_last_unsynced_change() -> None:
    for seed in range(10):
        node = Node(seed, PREFIX)
        node.run(fs.write_file("/f", b"keep", durable=True))
        node.run(fs.write_file("/f", b""))  # "w" truncates; nothing written
        assert node.files() == {"f": b""}
        node.crash()
        assert node.files() == {"f": b"keep"}


@pytest.mark.parametrize("dir_fsync", [False, True])
def test_a_created_file_survives_a_crash_only_after_fsync_dir(dir_fsync: bool) -> None:
    async def create() -> None:
        async with await fs.open("/new", "x") as f:
            await f.write(b"data")
            await f.fsync()
        if dir_fsync:
            await fs.fsync_dir("/")

    node = Node()
    node.run(create())
    assert node.files() == {"new": b"data"}
    node.crash()
    assert node.files() == ({"new": b"data"} if dir_fsync else {})


@pytest.mark.parametrize("dir_fsync", [False, True])
def test_a_removed_file_comes_back_unless_the_removal_was_fsynced(dir_fsync: bool) -> None:
    async def remove() -> None:
        await fs.remove("/f")
        if dir_fsync:
            await fs.fsync_dir("/")

    node = Node()
    node.run(fs.write_file("/f", b"data", durable=True))
    node.run(remove())
    assert node.files() == {}
    node.crash()
    assert node.files() == ({} if dir_fsync else {"f": b"data"})


def test_a_directory_and_its_files_need_the_parent_fsynced_too() -> None:
    async def make(sync_root: bool) -> None:
        await fs.mkdir("/d")
        await fs.write_file("/d/f", b"x", durable=True)  # fsyncs /d, not /
        if sync_root:
            await fs.fsync_dir("/")

    for sync_root in (False, True):
        node = Node()
        node.run(make(sync_root))
        assert node.run(fs.exists("/d/f"))
        node.crash()
        assert node.run(fs.exists("/d")) is sync_root
        assert node.run(fs.exists("/d/f")) is sync_root


@pytest.mark.parametrize("dir_fsync", [False, True])
def test_a_rename_is_durable_only_after_fsync_dir(dir_fsync: bool) -> None:
    async def replace() -> None:
        await fs.write_file("/db.tmp", b"new", durable=True)
        await fs.rename("/db.tmp", "/db")
        if dir_fsync:
            await fs.fsync_dir("/")

    node = Node()
    node.run(fs.write_file("/db", b"old", durable=True))
    node.run(replace())
    assert node.files() == {"db": b"new"}
    node.crash()
    expected = {"db": b"new"} if dir_fsync else {"db": b"old", "db.tmp": b"new"}
    assert node.files() == expected


def test_a_rename_between_directories_needs_both_fsynced() -> None:
    async def move() -> None:
        await fs.mkdir("/a")
        await fs.mkdir("/b")
        await fs.fsync_dir("/")
        await fs.write_file("/a/f", b"x", durable=True)
        await fs.rename("/a/f", "/b/f")
        await fs.fsync_dir("/b")  # but not /a

    node = Node()
    node.run(move())
    node.crash()
    assert node.run(fs.listdir("/a")) == ["f"]
    assert node.run(fs.listdir("/b")) == ["f"]


def test_a_crash_at_any_moment_leaves_the_old_or_the_new_file_never_both_or_neither() -> None:
    """Atomic replace: write a temp file, fsync it and its name, rename, fsync the dir."""
    seen = set()
    for seed in range(60):
        node = Node(seed, fs.DiskConfig(latency_min=0.001, latency_max=0.01))
        node.run(fs.write_file("/db", b"old", durable=True))
        progress: list[str] = []

        async def replace(progress: list[str] = progress) -> None:
            try:
                await fs.write_file("/db.tmp", b"new", durable=True)
                await fs.rename("/db.tmp", "/db")
                await fs.fsync_dir("/")
                progress.append("done")
            except OSError as exc:
                assert exc.errno == errno.EIO  # the node crashed under it
                progress.append("crashed")

        async def crash_later(node: Node = node, seed: int = seed) -> None:
            await asyncio.sleep(seed * 0.001)
            node.crash()

        context = new_node_context(node.ref)
        work = node.loop.create_task(replace(), context=context)
        node.loop.run_until_complete(asyncio.gather(work, crash_later(), return_exceptions=False))
        files = node.files()
        if progress == ["done"]:
            assert files == {"db": b"new"}
        else:
            assert files in ({"db": b"old"}, {"db": b"old", "db.tmp": b"new"}, {"db": b"new"})
        seen.add((progress[0], tuple(sorted(files.items()))))
    assert {outcome for outcome, _ in seen} == {"done", "crashed"}
    assert len(seen) >= 3  # crashed before the temp file's name, after it, and after the rename


def tear_outcome(seed: int, durable: bytes, data: bytes, offset: int, sector: int) -> bytes:
    node = Node(seed, fs.DiskConfig(sector_size=sector, tear_model="prefix"))
    node.run(fs.write_file("/f", durable, durable=True))
    node.run(pwrite("/f", data, offset))
    node.crash()
    return node.files()["f"]  # type: ignore[no-any-return]


def test_prefix_model_keeps_a_sector_aligned_prefix_and_all_outcomes_occur() -> None:
    data = bytes(range(256)) * 8  # four sectors
    kinds = set()
    for seed in range(60):
        after = tear_outcome(seed, b"", data, 0, SECTOR)
        assert len(after) % SECTOR == 0
        assert after == data[: len(after)]
        kinds.add("none" if not after else "whole" if after == data else "partial")
    assert kinds == {"none", "partial", "whole"}


def test_prefix_model_tears_on_sector_boundaries_of_the_file_not_of_the_write() -> None:
    base, data = b"d" * 300, b"w" * 1000  # the write covers 300..1300; sectors of 256
    lengths = set()
    for seed in range(80):
        after = tear_outcome(seed, base, data, 300, 256)
        assert after == (base + data)[: len(after)]
        lengths.add(len(after))
    assert lengths == {300, 512, 768, 1024, 1280, 1300}


def test_a_file_opened_before_a_crash_is_stale_afterwards() -> None:
    node = Node()
    node.run(fs.write_file("/f", b"x", durable=True))
    handle = node.run(fs.open("/f", "r+"))
    node.crash()

    async def use() -> int | None:
        try:
            await handle.write(b"ghost")
        except OSError as exc:
            return exc.errno
        return None

    assert node.run(use()) == errno.EIO
    assert node.files() == {"f": b"x"}


def test_an_operation_in_flight_at_the_crash_has_no_effect() -> None:
    node = Node(0, fs.DiskConfig(latency_min=1.0, latency_max=1.0))
    node.run(fs.write_file("/f", b"old", durable=True))
    old_ref = node.ref
    caught: list[int | None] = []

    async def slow_write() -> None:
        try:
            await fs.write_file("/f", b"new", durable=True)
        except OSError as exc:
            caught.append(exc.errno)

    async def crash_soon() -> None:
        await asyncio.sleep(1.5)  # during the write (open done at 1.0, write at 2.0)
        node.crash()

    work = node.loop.create_task(slow_write(), context=new_node_context(old_ref))
    node.loop.run_until_complete(asyncio.gather(work, crash_soon()))
    assert caught == [errno.EIO]
    # The write never happened; the truncation "w" made before it may have
    # reached the disk (the zero-length file of ext4 before auto_da_alloc).
    assert node.files()["f"] in (b"old", b"")


def test_a_crashed_incarnation_cannot_reach_the_disk() -> None:
    node = Node()
    old = node.ref
    node.crash()
    task = node.loop.create_task(fs.exists("/"), context=new_node_context(old))
    with pytest.raises(OSError, match="crashed"):
        node.loop.run_until_complete(task)


def scripted_run(seed: int) -> tuple[str, dict[str, bytes]]:
    config = fs.DiskConfig(
        latency_min=0.001,
        latency_max=0.005,
        corrupt_read_probability=0.1,
        misdirect_write_probability=0.1,
    )
    node = Node(seed, config)
    node.run(durable_empty("/log"))
    for i in range(10):
        node.run(pwrite("/log", bytes([i]) * 700, i * 700, sync=i % 3 == 0))
    node.crash()
    return node.loop.trace.hash, node.files()


def test_the_same_seed_gives_the_same_trace_and_data_and_other_seeds_differ() -> None:
    assert scripted_run(5) == scripted_run(5)
    assert len({scripted_run(seed)[0] for seed in range(5)}) == 5
