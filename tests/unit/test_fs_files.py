"""Plain file I/O inside a node lands on the node's simulated disk, with its crash semantics.

Unmodified code: `open`, `os`, `pathlib`, `shutil`, `tempfile`. What a crash
keeps is what the program fsynced (a new file's name with it, as Linux file
systems do; a rename only with its directory's fsync); nothing reaches the
real file system; real files are read through, never written.
"""

from __future__ import annotations

import asyncio
import errno
import os
import pathlib
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from _phases import run_phases

import seedbed
from seedbed import DiskConfig, Simulation, SimulationEscape

ROOT = "/seedbed-test-disk"  # never on the real machine: the tests check it stays absent


@pytest.fixture(autouse=True)
def _nothing_real() -> None:
    assert not os.path.exists(ROOT)
    yield
    assert not os.path.exists(ROOT), "a node's file reached the real disk"


def one_node(main, seed: int = 0, **options):  # type: ignore[no-untyped-def]
    sim = Simulation(seed=seed, **options)
    sim.client("n1", main)
    return sim.run(max_time=60).values["n1"]


async def write_log(sync: bool, dir_sync: bool = False) -> None:
    os.makedirs(f"{ROOT}/db", exist_ok=True)
    with open(f"{ROOT}/db/log", "a") as log:
        for i in range(40):
            log.write(f"record {i}\n")
        log.flush()
        if sync:
            os.fsync(log.fileno())
    if dir_sync:
        fd = os.open(f"{ROOT}/db", os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)


async def read_log() -> str | None:
    try:
        return pathlib.Path(f"{ROOT}/db/log").read_text()
    except FileNotFoundError:
        return None


def test_files_written_with_open_are_read_back_by_os_and_pathlib_and_stay_off_the_real_disk() -> (
    None
):
    async def main() -> tuple[list[str], bytes, int, bool]:
        await write_log(sync=False)
        names = os.listdir(f"{ROOT}/db")
        with open(f"{ROOT}/db/log", "rb") as f:
            head = f.read(9)
        return names, head, os.stat(f"{ROOT}/db/log").st_size, os.path.isdir(f"{ROOT}/db")

    names, head, size, is_dir = one_node(main)
    assert names == ["log"] and head == b"record 0\n" and is_dir
    assert size == sum(len(f"record {i}\n") for i in range(40))


def test_an_unsynced_log_is_lost_or_torn_in_some_seeds_and_intact_in_others() -> None:
    full = "".join(f"record {i}\n" for i in range(40))
    outcomes = set()
    for seed in range(12):
        assert run_phases(lambda: write_log(sync=False), read_log, seed=seed)[1] is None
        _, after = run_phases(lambda: write_log(sync=False, dir_sync=True), read_log, seed=seed)
        assert after is not None and len(after) <= len(full)  # the name was synced, not the data
        outcomes.add("intact" if after == full else "lost or torn")
    assert outcomes == {"intact", "lost or torn"}


def test_an_fsynced_new_file_survives_a_crash_with_its_name_as_on_linux() -> None:
    for seed in range(8):
        _, after = run_phases(lambda: write_log(sync=True), read_log, seed=seed)
        assert after == "".join(f"record {i}\n" for i in range(40))


def test_a_buffered_write_never_flushed_is_the_process_memory_and_dies_with_it() -> None:
    async def write_unflushed() -> None:
        os.makedirs(ROOT, exist_ok=True)
        f = open(f"{ROOT}/buffered", "w")  # noqa: SIM115 (left open: the crash comes first)
        f.write("in the buffer")
        fd = os.open(ROOT, os.O_RDONLY)
        os.fsync(fd)  # the name is durable; the data never left the process
        os.close(fd)
        os.fsync(f.fileno())
        write_unflushed.kept = f  # type: ignore[attr-defined]

    async def read() -> str:
        return pathlib.Path(f"{ROOT}/buffered").read_text()

    assert run_phases(write_unflushed, read)[1] == ""


async def replace_config(dir_sync: bool) -> None:
    os.makedirs(ROOT, exist_ok=True)
    for version in ("v1", "v2"):
        with open(f"{ROOT}/config.tmp", "w") as f:
            f.write(version)
            f.flush()
            os.fsync(f.fileno())
        os.replace(f"{ROOT}/config.tmp", f"{ROOT}/config")
        if dir_sync or version == "v1":
            fd = os.open(ROOT, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(fd)
            os.close(fd)


async def read_config() -> str:
    return pathlib.Path(f"{ROOT}/config").read_text()


def test_a_rename_is_durable_only_after_its_directory_is_fsynced() -> None:
    assert run_phases(lambda: replace_config(True), read_config)[1] == "v2"
    assert run_phases(lambda: replace_config(False), read_config)[1] == "v1"


def test_shutil_and_pathlib_and_tempfile_work_on_the_disk() -> None:
    async def main() -> dict[str, object]:
        base = pathlib.Path(ROOT, "tree")
        (base / "a" / "b").mkdir(parents=True)
        (base / "a" / "b" / "f.txt").write_text("one")
        shutil.copytree(base / "a", base / "copy")
        shutil.copy2(base / "a" / "b" / "f.txt", base / "g.txt")
        shutil.move(str(base / "g.txt"), str(base / "h.txt"))
        walked = sorted(str(pathlib.Path(d).relative_to(base)) for d, _, _ in os.walk(base))
        globbed = sorted(p.name for p in base.glob("**/*.txt"))
        fd, name = tempfile.mkstemp(dir=ROOT)
        os.write(fd, b"x")
        os.close(fd)
        with tempfile.NamedTemporaryFile(dir=ROOT) as named, tempfile.TemporaryFile() as anon:
            named.write(b"named")
            anon.write(b"anonymous")
            anon.seek(0)
            anon_data = anon.read()
        with tempfile.TemporaryDirectory() as scratch:
            pathlib.Path(scratch, "x").write_bytes(b"1")
        shutil.rmtree(base / "a")
        return {
            "walked": walked, "globbed": globbed, "anon": anon_data,
            "left": sorted(os.listdir(base)), "temp": os.path.getsize(name),
            "scratch gone": not os.path.exists(scratch),
            "copied": (base / "copy/b/f.txt").read_text(),
        }  # fmt: skip

    got = one_node(main)
    assert got["walked"] == [".", "a", "a/b", "copy", "copy/b"]
    assert got["globbed"] == ["f.txt", "f.txt", "h.txt"]
    assert got["left"] == ["copy", "h.txt"] and got["copied"] == "one"
    assert got["anon"] == b"anonymous" and got["temp"] == 1 and got["scratch gone"]


def test_real_files_are_read_through_and_a_write_to_one_changes_only_the_node_copy(
    tmp_path: Path,
) -> None:
    real = tmp_path / "settings.ini"
    real.write_text("real contents\n")

    async def main() -> tuple[str, str, list[str]]:
        before = real.read_text()
        with open(real, "a") as f:
            f.write("the node's line\n")
        (tmp_path / "new.txt").write_text("made by the node")
        return before, real.read_text(), sorted(os.listdir(tmp_path))

    before, after, names = one_node(main)
    assert before == "real contents\n"
    assert after == "real contents\nthe node's line\n"
    assert names == ["new.txt", "settings.ini"]
    assert real.read_text() == "real contents\n"  # the real file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.ini"]


def test_a_crash_takes_a_copied_up_file_back_to_the_real_contents(tmp_path: Path) -> None:
    real = tmp_path / "state"
    real.write_text("real")

    async def overwrite() -> None:
        real.write_text("unsynced")

    async def read() -> str:
        return real.read_text()

    outcomes = {run_phases(overwrite, read, seed=seed)[1] for seed in range(10)}
    assert "unsynced" in outcomes
    assert any(after.startswith("real") for after in outcomes), "back to the real contents"


def test_a_removed_real_file_is_hidden_from_the_node_only() -> None:
    here = Path(__file__)

    async def main() -> tuple[bool, bool]:
        existed = os.path.exists(here)
        os.remove(here)
        return existed, os.path.exists(here)

    assert one_node(main) == (True, False)
    assert here.exists()


def test_the_disk_faults_reach_plain_os_calls() -> None:
    async def main() -> str:
        os.makedirs(ROOT)
        fd = os.open(f"{ROOT}/f", os.O_WRONLY | os.O_CREAT)
        os.write(fd, b"data")
        try:
            os.fsync(fd)
        except OSError as exc:
            return errno.errorcode[exc.errno or 0]
        return "synced"

    assert one_node(main, disk=DiskConfig(fsync_error_probability=1.0)) == "EIO"


def test_disk_latency_blocks_the_thread_on_virtual_time() -> None:
    async def main() -> float:
        os.makedirs(ROOT)
        start = time_now()
        with open(f"{ROOT}/f", "wb", buffering=0) as f:
            for _ in range(10):
                f.write(b"x")
        return time_now() - start

    spent = one_node(main, disk=DiskConfig(latency_min=0.01, latency_max=0.01))
    assert spent == pytest.approx(0.01 * 11, abs=0.002)  # the open and 10 writes; close is free


def time_now() -> float:
    return asyncio.get_running_loop().time()


def test_descriptors_behave_as_posix_says() -> None:
    async def main() -> list[object]:
        os.makedirs(ROOT)
        fd = os.open(f"{ROOT}/f", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        seen: list[object] = [fd >= 1 << 30, os.write(fd, b"hello world")]
        seen.append(os.lseek(fd, 6, os.SEEK_SET))
        seen.append(os.read(fd, 100))
        copy = os.dup(fd)
        os.lseek(copy, 0, os.SEEK_SET)  # a dup shares the position
        seen.append(os.read(fd, 5))
        seen.append(os.pread(fd, 5, 6))
        os.ftruncate(fd, 5)
        seen.append(os.fstat(fd).st_size)
        seen.append(oct(os.stat(f"{ROOT}/f").st_mode & 0o777))
        os.close(fd)
        os.close(copy)
        for flags in (os.O_RDONLY | os.O_CREAT | os.O_EXCL, os.O_RDONLY):
            try:
                os.open(f"{ROOT}/f" if flags & os.O_EXCL else f"{ROOT}/none", flags)
            except OSError as exc:
                seen.append(type(exc).__name__)
        with pytest.raises(IsADirectoryError), open(ROOT, "w"):
            pass
        return seen

    assert one_node(main) == [
        True, 11, 6, b"world", b"hello", b"world", 5, "0o600",
        "FileExistsError", "FileNotFoundError",
    ]  # fmt: skip


def test_each_node_has_its_own_disk_and_working_directory() -> None:
    async def main() -> tuple[list[str], str]:
        me = seedbed.current_node()
        os.makedirs(ROOT, exist_ok=True)
        pathlib.Path(ROOT, f"{me}.txt").write_text(me or "")
        os.chdir(ROOT)
        await asyncio.sleep(0.1)
        return os.listdir("."), os.getcwd()

    sim = Simulation(seed=3)
    sim.client("a", main)
    sim.client("b", main)
    values = sim.run(max_time=5).values
    assert values == {"a": (["a.txt"], ROOT), "b": (["b.txt"], ROOT)}
    assert os.getcwd() != ROOT


def test_code_outside_nodes_sees_the_real_file_system(tmp_path: Path) -> None:
    async def plain() -> str:
        (tmp_path / "plain").write_text("real")
        return (tmp_path / "plain").read_text()

    assert seedbed.run(plain, seed=0).value == "real"
    assert (tmp_path / "plain").read_text() == "real"


def test_tempfile_names_come_from_the_seed_whatever_ran_before() -> None:
    async def main() -> str:
        return tempfile.mkdtemp()

    alone = one_node(main, seed=5)
    for seed in range(3):
        one_node(main, seed=seed)
    assert one_node(main, seed=5) == alone


@pytest.mark.parametrize(
    "call",
    [
        lambda: __import__("_io").FileIO(f"{ROOT}-bypass", "w"),
        lambda: sqlite3.connect(f"{ROOT}-sqlite.db"),
        lambda: os.symlink("/etc/hostname", f"{ROOT}-link"),
    ],
    ids=["FileIO-directly", "sqlite-on-a-file", "symlink"],
)
def test_what_would_bypass_the_disk_is_refused(call) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        call()

    with pytest.raises(SimulationEscape) as caught:
        one_node(main)
    assert "inside a simulated run" in str(caught.value)
    assert not os.path.exists(f"{ROOT}-bypass") and not os.path.exists(f"{ROOT}-sqlite.db")


def test_sqlite_in_memory_is_fine_inside_a_node() -> None:
    async def main() -> int:
        db = sqlite3.connect(":memory:")
        db.execute("create table t (x)")
        db.execute("insert into t values (1)")
        return int(db.execute("select count(*) from t").fetchone()[0])

    assert one_node(main) == 1


def test_an_operation_crash_fires_at_a_plain_fsync() -> None:
    async def main() -> None:
        os.makedirs(ROOT, exist_ok=True)
        for i in range(3):
            with open(f"{ROOT}/r{i}", "w") as f:
                f.write("x")
                f.flush()
                os.fsync(f.fileno())
            await asyncio.sleep(0.01)

    sim = Simulation(seed=0)
    sim.host("n1", main)
    sim.advance(0.001)
    assert sim.crash_at_operation("n1", "fsync", count=2, after=False)
    sim.advance(1.0)
    assert sim.disarm_operation("n1") is True
    sim.run(max_time=2.0)


def test_text_modes_encodings_and_the_standard_librarys_writers_behave_as_in_production() -> None:
    async def main() -> dict[str, object]:
        import glob
        import json
        import logging
        import zipfile

        os.makedirs(ROOT)
        with open(f"{ROOT}/t.txt", "w", encoding="utf-16", newline="\r\n") as f:
            f.write("één\ntwo\n")
        with open(f"{ROOT}/t.txt", encoding="utf-16", newline="") as f:
            lines = list(f)
        with open(f"{ROOT}/a.bin", "ab") as f:
            start = f.tell()
        with open(f"{ROOT}/t.json", "x") as f:
            json.dump({"k": [1, 2]}, f)
        handler = logging.FileHandler(f"{ROOT}/app.log")
        log = logging.getLogger("seedbed.test.fs")
        log.addHandler(handler)
        log.warning("stored")
        log.removeHandler(handler)
        handler.close()
        with zipfile.ZipFile(f"{ROOT}/z.zip", "w") as z:
            z.writestr("inside.txt", "zipped")
        with zipfile.ZipFile(f"{ROOT}/z.zip") as z:
            zipped = z.read("inside.txt")
        pathlib.Path(f"{ROOT}/touched").touch()
        return {
            "lines": lines, "append starts at": start,
            "json": json.loads(pathlib.Path(f"{ROOT}/t.json").read_text()),
            "log": pathlib.Path(f"{ROOT}/app.log").read_text(), "zip": zipped,
            "glob": sorted(os.path.basename(p) for p in glob.glob(f"{ROOT}/t.*")),
            "mtime": os.path.getmtime(f"{ROOT}/touched"),
            "same": os.path.samefile(f"{ROOT}/touched", f"{ROOT}/../{ROOT[1:]}/touched"),
            "resolved": str(pathlib.Path(f"{ROOT}/x/../touched").resolve()),
        }  # fmt: skip

    got = one_node(main)
    assert got["lines"] == ["één\r\n", "two\r\n"] and got["append starts at"] == 0
    assert got["json"] == {"k": [1, 2]} and got["log"] == "stored\n" and got["zip"] == b"zipped"
    assert got["glob"] == ["t.json", "t.txt"] and got["same"] is True
    assert got["resolved"] == f"{ROOT}/touched"
    assert 1.7e9 < float(got["mtime"]) < 1.8e9  # the node's virtual wall clock (2024)


def test_a_file_object_wraps_a_simulated_descriptor_and_shares_its_position() -> None:
    async def main() -> tuple[bytes, bytes, bool]:
        os.makedirs(ROOT)
        fd = os.open(f"{ROOT}/f", os.O_RDWR | os.O_CREAT)
        os.write(fd, b"0123456789")
        os.lseek(fd, 4, os.SEEK_SET)
        with open(fd, "rb", buffering=0, closefd=False) as f:
            head = f.read(3)
        rest = os.read(fd, 100)
        os.close(fd)
        with os.scandir(ROOT) as entries:
            [entry] = list(entries)
        return head, rest, entry.is_file() and entry.stat().st_size == 10

    assert one_node(main) == (b"456", b"789", True)


def test_a_relative_data_folder_hashes_the_same_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def write() -> None:
        os.makedirs("data", exist_ok=True)
        with open("data/log", "ab") as f:
            f.write(b"x" * 2000)
            f.flush()
            os.fsync(f.fileno())  # the name is durable; what follows is torn at the crash
            f.write(b"y" * 3000)
        await asyncio.sleep(10)

    hashes = set()
    for where in ("a", "deeper/b"):
        (tmp_path / where).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / where)
        sim = Simulation(seed=4)
        sim.host("n1", write)
        sim.advance(1.0)
        sim.crash("n1")  # the torn sectors' draws name the file: ./data/log
        hashes.add(sim.run(max_time=2.0).trace_hash)
        assert not (tmp_path / where / "data").exists()
    assert len(hashes) == 1


def test_package_data_certificates_and_zoneinfo_are_read_through() -> None:
    async def main() -> tuple[str, bool, str]:
        import importlib.resources
        import ssl
        import zoneinfo

        typed = importlib.resources.files("seedbed").joinpath("py.typed").read_text()
        context = ssl.create_default_context()
        paris = zoneinfo.ZoneInfo("Europe/Paris")
        return typed, context.verify_mode == ssl.CERT_REQUIRED, str(paris)

    assert one_node(main)[1:] == (True, "Europe/Paris")


def test_reading_the_machines_own_state_still_escapes_and_a_file_mmap_is_refused() -> None:
    async def proc() -> None:
        with open("/proc/self/io") as status:  # (its stat and status are simulated)
            status.read()

    async def mapped() -> None:
        import mmap

        os.makedirs(ROOT)
        with open(f"{ROOT}/m", "w+b") as f:
            f.write(b"x" * 4096)
            f.flush()
            mmap.mmap(f.fileno(), 4096)

    for main in (proc, mapped):
        with pytest.raises(SimulationEscape):
            one_node(main)


def test_a_log_written_to_dev_stdout_or_dev_null_is_no_escape(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async def main() -> None:
        with open("/dev/stdout", "w") as out, open("/dev/null", "w") as null:
            out.write("to the terminal\n")
            null.write("to nowhere\n")

    one_node(main)
    assert "to the terminal" in capfd.readouterr().out
