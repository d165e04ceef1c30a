"""seedbed.fs: one body of file operations, on real files and on a simulated disk.

Every test here runs twice: on real files under `tmp_path` (no node running,
so seedbed.fs uses the os) and on a node's `SimDisk` inside a seedbed loop.
The two backends must agree on results and on error types.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import seedbed
from seedbed import fs
from seedbed._core.entropy import Entropy
from seedbed._core.identity import NodeRef, current_ref, new_node_context
from seedbed.errors import UsageError

Body = Callable[[str], Awaitable[Any]]


def run_real(body: Body, tmp_path: Path) -> Any:
    return asyncio.run(body(str(tmp_path)))


def run_sim(body: Body, seed: int = 0) -> Any:
    loop = seedbed.SeedbedLoop(seed=seed)
    stream = Entropy(seed, loop.trace).stream("disk n1")
    disk = fs.SimDisk(stream, fs.DiskConfig(latency_min=0.001, latency_max=0.01), name="n1")

    async def main() -> Any:
        assert current_ref() is not None
        await fs.mkdir("/data")
        return await body("/data")

    ref = NodeRef("n1", 1, disk=disk)
    try:
        return loop.run_until_complete(loop.create_task(main(), context=new_node_context(ref)))
    finally:
        loop.close()


@pytest.fixture(params=["real", "sim"])
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Body], Any]:
    if request.param == "real":
        return lambda body: run_real(body, tmp_path)
    return run_sim


def test_a_written_file_reads_back_and_listdir_is_sorted(run: Callable[[Body], Any]) -> None:
    async def body(root: str) -> Any:
        for name in ["b", "a", "c10", "c2"]:
            await fs.write_file(f"{root}/{name}", name.encode() * 3, durable=True)
        await fs.mkdir(f"{root}/sub")
        await fs.fsync_dir(root)
        return await fs.listdir(root), await fs.read_file(f"{root}/c2")

    assert run(body) == (["a", "b", "c10", "c2", "sub"], b"c2c2c2")


def test_positions_seek_pread_pwrite_append_and_truncate(run: Callable[[Body], Any]) -> None:
    async def body(root: str) -> Any:
        path = f"{root}/f"
        seen = []
        async with await fs.open(path, "w+") as f:
            assert await f.write(b"hello world") == 11
            assert f.tell() == 11
            f.seek(0)
            seen.append(await f.read(5))
            seen.append(await f.read())
            seen.append(await f.read())
            await f.pwrite(b"W", 6)
            seen.append(await f.pread(5, 6))
            assert f.tell() == 11
            await f.append(b"!")
            f.seek(-1, os.SEEK_CUR)
            seen.append(await f.read())
            await f.truncate(5)
            seen.append(await f.size())
            await f.fsync()
        async with await fs.open(path, "a") as f:
            await f.write(b"++")
        async with await fs.open(path, "r+") as f:
            await f.write(b"J")
        seen.append(await fs.read_file(path))
        async with await fs.open(path, "w") as f:
            pass
        seen.append(await fs.read_file(path))
        return seen

    assert run(body) == [b"hello", b" world", b"", b"World", b"!", 5, b"Jello++", b""]


def test_writing_past_the_end_fills_the_gap_with_zeros(run: Callable[[Body], Any]) -> None:
    async def body(root: str) -> Any:
        async with await fs.open(f"{root}/f", "w+") as f:
            await f.pwrite(b"x", 4)
            return await f.pread(-1, 0)

    assert run(body) == b"\0\0\0\0x"


def test_rename_replaces_the_target_and_remove_deletes(run: Callable[[Body], Any]) -> None:
    async def body(root: str) -> Any:
        await fs.write_file(f"{root}/old", b"old")
        await fs.write_file(f"{root}/new.tmp", b"new")
        await fs.rename(f"{root}/new.tmp", f"{root}/old")
        await fs.fsync_dir(root)
        after_rename = (await fs.listdir(root), await fs.read_file(f"{root}/old"))
        await fs.remove(f"{root}/old")
        return after_rename, await fs.exists(f"{root}/old"), await fs.listdir(root)

    assert run(body) == ((["old"], b"new"), False, [])


def test_mkdir_with_parents_and_exist_ok_and_rmdir(run: Callable[[Body], Any]) -> None:
    async def body(root: str) -> Any:
        await fs.mkdir(f"{root}/a/b/c", parents=True)
        await fs.mkdir(f"{root}/a/b", exist_ok=True)
        await fs.mkdir(f"{root}/a/b/c", parents=True, exist_ok=True)
        await fs.rmdir(f"{root}/a/b/c")
        return await fs.listdir(f"{root}/a"), await fs.exists(f"{root}/a/b/c")

    assert run(body) == (["b"], False)


ERROR_CASES: list[tuple[str, type[OSError], Callable[[str], Awaitable[Any]]]] = [
    ("read a missing file", FileNotFoundError, lambda r: fs.read_file(f"{r}/missing")),
    ("open r+ a missing file", FileNotFoundError, lambda r: fs.open(f"{r}/missing", "r+")),
    ("create in a missing dir", FileNotFoundError, lambda r: fs.write_file(f"{r}/no/f", b"")),
    ("open x an existing file", FileExistsError, lambda r: fs.open(f"{r}/file", "x")),
    ("open a directory", IsADirectoryError, lambda r: fs.open(f"{r}/dir", "r")),
    ("write a directory", IsADirectoryError, lambda r: fs.open(f"{r}/dir", "w")),
    ("a file as a directory", NotADirectoryError, lambda r: fs.open(f"{r}/file/x", "w")),
    ("listdir a file", NotADirectoryError, lambda r: fs.listdir(f"{r}/file")),
    ("remove a directory", IsADirectoryError, lambda r: fs.remove(f"{r}/dir")),
    ("remove a missing file", FileNotFoundError, lambda r: fs.remove(f"{r}/missing")),
    ("mkdir an existing dir", FileExistsError, lambda r: fs.mkdir(f"{r}/dir")),
    ("mkdir over a file", FileExistsError, lambda r: fs.mkdir(f"{r}/file", exist_ok=True)),
    ("rename a missing file", FileNotFoundError, lambda r: fs.rename(f"{r}/nope", f"{r}/x")),
    ("rename a file onto a dir", IsADirectoryError, lambda r: fs.rename(f"{r}/file", f"{r}/dir")),
    ("rmdir a non-empty dir", OSError, lambda r: fs.rmdir(f"{r}/dir")),
    ("fsync_dir a missing dir", FileNotFoundError, lambda r: fs.fsync_dir(f"{r}/nope")),
]


@pytest.mark.parametrize(
    ("what", "error", "action"), ERROR_CASES, ids=[case[0] for case in ERROR_CASES]
)
def test_errors_are_the_os_error_subclasses_python_raises(
    run: Callable[[Body], Any],
    what: str,
    error: type[OSError],
    action: Callable[[str], Awaitable[Any]],
) -> None:
    async def body(root: str) -> Any:
        await fs.write_file(f"{root}/file", b"x")
        await fs.mkdir(f"{root}/dir")
        await fs.write_file(f"{root}/dir/inner", b"y")
        try:
            result = await action(root)
        except OSError as exc:
            return type(exc), exc.errno
        if isinstance(result, fs.File):
            await result.close()
        return None

    outcome = run(body)
    assert outcome is not None, f"{what}: no error"
    assert issubclass(outcome[0], error), f"{what}: {outcome}"
    if what == "rmdir a non-empty dir":
        assert outcome[1] == errno.ENOTEMPTY


def test_files_refuse_the_wrong_direction_and_use_after_close(
    run: Callable[[Body], Any],
) -> None:
    async def body(root: str) -> Any:
        await fs.write_file(f"{root}/f", b"data")
        errors = []
        async with await fs.open(f"{root}/f", "r") as f:
            try:
                await f.write(b"x")
            except OSError as exc:
                errors.append(exc.errno)
        async with await fs.open(f"{root}/f", "a") as f:
            try:
                await f.read()
            except OSError as exc:
                errors.append(exc.errno)
        try:
            await f.read()
        except ValueError:
            errors.append("closed")
        await f.close()  # closing twice is fine
        return errors

    assert run(body) == [errno.EBADF, errno.EBADF, "closed"]


@pytest.mark.parametrize("mode", ["rt", "q", "w+b+", "rbb"])
def test_text_and_unknown_modes_are_usage_errors(run: Callable[[Body], Any], mode: str) -> None:
    async def body(root: str) -> Any:
        with pytest.raises(UsageError, match="mode"):
            await fs.open(f"{root}/f", mode)

    run(body)


def test_the_real_backend_uses_paths_as_given_and_fsyncs(tmp_path: Path) -> None:
    async def body() -> None:
        await fs.write_file(tmp_path / "a", b"1", durable=True)
        async with await fs.open(tmp_path / "b", "wb") as f:
            await f.write(b"2")
            await f.fsync()
        await fs.fsync_dir(tmp_path)

    asyncio.run(body())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]
    assert (tmp_path / "a").read_bytes() == b"1" and (tmp_path / "b").read_bytes() == b"2"


def test_relative_paths_are_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    asyncio.run(fs.write_file("rel", b"here"))
    assert (tmp_path / "rel").read_bytes() == b"here"
    assert asyncio.run(fs.listdir()) == ["rel"]


def test_a_node_without_a_disk_is_a_usage_error() -> None:
    loop = seedbed.SeedbedLoop(seed=0)
    ctx = new_node_context(NodeRef("n1", 1))
    with pytest.raises(UsageError, match="n1 has no simulated disk"):
        loop.run_until_complete(loop.create_task(fs.exists("/x"), context=ctx))
    loop.close()
