"""seedbed.fs faults: DiskConfig validation, each fault at its rate, and sparing one replica."""

from __future__ import annotations

import errno
from typing import Any

import pytest
from _disknode import Node

from seedbed import fs
from seedbed._core.entropy import Entropy
from seedbed._core.trace import Trace
from seedbed.errors import UsageError

SECTOR = 512
OPS = 1000


def pattern(sector: int) -> bytes:
    return bytes((sector * 7 + i) % 251 for i in range(SECTOR))


async def make_file(sectors: int) -> None:
    async with await fs.open("/f", "w") as f:
        for sector in range(sectors):
            await f.write(pattern(sector))
        await f.fsync()
    await fs.fsync_dir("/")


# -- configuration -----------------------------------------------------------------


def test_every_fault_is_off_by_default() -> None:
    config = fs.DiskConfig()
    assert config.read_error_probability == config.write_error_probability == 0
    assert config.corrupt_read_probability == config.misdirect_write_probability == 0
    assert config.latency_min == config.latency_max == 0
    assert config.sector_size == SECTOR and config.spare_one_replica is False


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("read_error_probability", 1.5),
        ("write_error_probability", -0.1),
        ("corrupt_read_probability", float("nan")),
        ("misdirect_write_probability", "0.1"),
        ("latency_min", -1.0),
        ("latency_max", float("inf")),
        ("sector_size", 0),
        ("sector_size", 512.0),
        ("spare_one_replica", 1),
    ],
)
def test_a_bad_setting_is_a_one_line_usage_error_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(UsageError, match=f"DiskConfig.{field}") as info:
        fs.DiskConfig(**{field: value})
    assert "\n" not in str(info.value)
    assert str(info.value).endswith(f", got {value!r}")


def test_latency_max_below_latency_min_is_refused() -> None:
    with pytest.raises(
        UsageError, match=r"DiskConfig.latency_max must be >= latency_min \(0\.5\), got 0\.1"
    ):
        fs.DiskConfig(latency_min=0.5, latency_max=0.1)


def test_sparing_a_replica_needs_a_coordinator() -> None:
    stream = Entropy(0, Trace()).stream("disk n1")
    with pytest.raises(UsageError, match="FaultCoordinator"):
        fs.SimDisk(stream, fs.DiskConfig(spare_one_replica=True))


# -- the default disk -------------------------------------------------------------


def test_a_default_disk_injects_nothing_and_draws_nothing_until_a_crash() -> None:
    trace = Trace(keep=True)
    node = Node(0, trace=trace)

    async def work() -> None:
        await make_file(8)
        async with await fs.open("/f", "r+") as f:
            for i in range(200):
                await f.pwrite(pattern(i % 8), (i % 8) * SECTOR)
                assert await f.pread(SECTOR, (i % 8) * SECTOR) == pattern(i % 8)
            await f.fsync()

    node.run(work())
    assert trace.events is not None
    assert [e for e in trace.events if e[0] == "draw" and e[1] == "disk n1"] == []
    assert set(node.disk.fault_counts.values()) == {0}
    assert node.loop.time() < 0.001  # no latency: only the loop's tiny callback costs


def test_latency_takes_virtual_time_per_operation() -> None:
    node = Node(0, fs.DiskConfig(latency_min=0.25, latency_max=0.25))
    node.run(make_file(2))  # open, 2 writes, fsync, fsync_dir
    assert node.loop.time() == pytest.approx(5 * 0.25, abs=0.001)
    node = Node(0, fs.DiskConfig(latency_min=0.01, latency_max=0.02))
    node.run(make_file(2))
    assert 5 * 0.01 <= node.loop.time() < 5 * 0.02


# -- each fault at roughly its probability ----------------------------------------


def test_read_errors_raise_eio_at_their_rate() -> None:
    node = Node(1, fs.DiskConfig(read_error_probability=0.1))

    async def work() -> int:
        await make_file(1)
        errors = 0
        async with await fs.open("/f", "r") as f:
            for _ in range(OPS):
                try:
                    assert await f.pread(SECTOR, 0) == pattern(0)
                except OSError as exc:
                    assert exc.errno == errno.EIO
                    errors += 1
        return errors

    errors = node.run(work())
    assert 60 < errors < 140
    assert node.disk.fault_counts["read_error"] == errors


def test_write_errors_raise_eio_at_their_rate_and_write_nothing() -> None:
    node = Node(2, fs.DiskConfig(write_error_probability=0.1))

    async def work() -> tuple[int, bytes]:
        errors = 0
        async with await fs.open("/f", "w+") as f:
            for i in range(OPS):
                try:
                    await f.append(bytes([i % 256]))
                except OSError as exc:
                    assert exc.errno == errno.EIO
                    errors += 1
            return errors, await f.pread(-1, 0)

    errors, data = node.run(work())
    assert 60 < errors < 140
    assert len(data) == OPS - errors


def test_corrupt_reads_flip_one_bit_of_the_returned_data_at_their_rate() -> None:
    node = Node(3, fs.DiskConfig(corrupt_read_probability=0.1))

    async def work() -> int:
        await make_file(4)
        corrupted = 0
        expected = b"".join(pattern(s) for s in range(4))
        async with await fs.open("/f", "r") as f:
            for _ in range(OPS):
                data = await f.pread(-1, 0)
                flipped = sum(bin(a ^ b).count("1") for a, b in zip(data, expected, strict=True))
                assert flipped in (0, 1)
                corrupted += flipped
        return corrupted

    corrupted = node.run(work())
    assert 60 < corrupted < 140
    assert node.disk.fault_counts["corrupt_read"] == corrupted


def test_misdirected_writes_happen_at_their_rate() -> None:
    node = Node(4, fs.DiskConfig(misdirect_write_probability=0.1))

    async def work() -> None:
        await make_file(8)
        async with await fs.open("/f", "r+") as f:
            for i in range(OPS):
                await f.pwrite(pattern(i % 8), (i % 8) * SECTOR)

    node.run(work())
    assert 60 < node.disk.fault_counts["misdirect_write"] < 140


def test_a_misdirected_write_reads_back_right_until_a_crash_shows_where_it_landed() -> None:
    node = Node(5, fs.DiskConfig(misdirect_write_probability=1.0))
    new = b"N" * 100

    async def work() -> bytes:
        async with await fs.open("/f", "x+") as f:
            await f.truncate(4 * SECTOR)
            await f.fsync()
            await fs.fsync_dir("/")
            await f.pwrite(new, 2 * SECTOR + 10)
            await f.fsync()
            return await f.pread(100, 2 * SECTOR + 10)

    assert node.run(work()) == new  # the page cache shows it where it was aimed
    node.crash()
    data: bytes = node.run(fs.read_file("/f"))
    assert data[2 * SECTOR + 10 : 2 * SECTOR + 110] == bytes(100)  # not there on disk
    landed = data.index(new)
    assert landed % SECTOR == 10 and landed != 2 * SECTOR + 10


# -- sparing one replica ----------------------------------------------------------


REPLICAS = ["n1", "n2", "n3"]


def replica_nodes(seed: int, config: fs.DiskConfig, path: str) -> list[Node]:
    """Three replicas with `path` created durably on each, and a client disk without it."""
    coordinator = fs.FaultCoordinator() if config.spare_one_replica else None
    Node(seed, config, name="client", coordinator=coordinator)  # counts for no file
    nodes = [Node(seed, config, name=name, coordinator=coordinator) for name in REPLICAS]
    for node in nodes:
        node.run(fs.write_file(path, b"", durable=True))
    return nodes


def damage_per_sector(seed: int, *, spare: bool) -> dict[int, set[str]]:
    """For each sector of /f: the replicas on which some read of it came back wrong."""
    config = fs.DiskConfig(
        corrupt_read_probability=0.3,
        misdirect_write_probability=0.3,
        spare_one_replica=spare,
    )

    async def write_sectors() -> None:
        async with await fs.open("/f", "r+") as f:
            for sector in range(8):
                await f.pwrite(pattern(sector), sector * SECTOR)
            await f.fsync()

    async def read_sectors() -> list[bytes]:
        async with await fs.open("/f", "r") as f:
            return [await f.pread(SECTOR, s * SECTOR) for s in range(8) for _ in range(3)]

    bad: dict[int, set[str]] = {}
    for node in replica_nodes(seed, config, "/f"):
        node.run(write_sectors())
        node.crash()
        for i, data in enumerate(node.run(read_sectors())):
            if data != pattern(i // 3):
                bad.setdefault(i // 3, set()).add(node.ref.name)
    return bad


def test_sparing_one_replica_never_damages_a_block_on_every_replica() -> None:
    most = 0
    for seed in range(40):
        damage = damage_per_sector(seed, spare=True)
        assert all(len(names) < len(REPLICAS) for names in damage.values()), f"seed {seed}"
        most = max([most, *map(len, damage.values())])
    assert most == len(REPLICAS) - 1  # damage still happens, on all replicas but one


def test_without_sparing_some_block_is_damaged_on_every_replica() -> None:
    assert any(
        len(names) == len(REPLICAS)
        for seed in range(40)
        for names in damage_per_sector(seed, spare=False).values()
    )


def torn_on_every_replica(seed: int, *, spare: bool) -> bool:
    data = bytes(range(256)) * 8  # four sectors
    nodes = replica_nodes(seed, fs.DiskConfig(spare_one_replica=spare), "/wal")
    partial = []
    for node in nodes:
        node.run(fs.write_file("/wal", data))
        node.crash()
        after = node.run(fs.read_file("/wal"))
        partial.append(0 < len(after) < len(data))
    return all(partial)


def test_sparing_one_replica_never_tears_the_same_write_everywhere() -> None:
    assert not any(torn_on_every_replica(seed, spare=True) for seed in range(60))
    assert any(torn_on_every_replica(seed, spare=False) for seed in range(60))


def test_the_coordinator_grants_damage_while_one_replica_stays_clean() -> None:
    coordinator = fs.FaultCoordinator()
    for name in ["a", "b", "c", "client"]:
        coordinator.register(name)
    assert not coordinator.permit("a", "/f", [1])  # nobody else has /f
    for name in ["a", "b", "c"]:
        coordinator.files_changed(name, ["/f"])
    assert coordinator.holders("/f") == ["a", "b", "c"]
    assert coordinator.permit("a", "/f", [1, 2])
    assert coordinator.permit("b", "/f", [2])
    assert not coordinator.permit("c", "/f", [2, 3])  # sector 2 would be damaged everywhere
    assert coordinator.damaged("/f", 3) == []  # all or nothing
    assert coordinator.permit("c", "/f", [3])
    assert coordinator.permit("a", "/f", [2])  # already damaged on a: no new replica hit
    assert coordinator.damaged("/f", 2) == ["a", "b"]
    coordinator.renamed("c", "/f", "/g")
    assert coordinator.damaged("/g", 3) == ["c"]
    with pytest.raises(ValueError, match="already registered"):
        coordinator.register("a")


async def _write_and_fsync(data: bytes) -> str:
    """Write `data` to a new, durably named /g and fsync it; say how the fsync ended."""
    async with await fs.open("/g", "w") as f:
        await fs.fsync_dir("/")
        await f.write(data)
        try:
            await f.fsync()
        except OSError as exc:
            return errno.errorcode[exc.errno or 0]
    return "ok"


def test_a_failed_fsync_loses_the_writes_it_covered_though_reads_show_them_until_a_crash() -> None:
    node = Node(config=fs.DiskConfig(fsync_error_probability=1.0))

    async def write_then_read() -> tuple[str, bytes]:
        outcome = await _write_and_fsync(b"acknowledged?")
        return outcome, await fs.read_file("/g")

    assert node.run(write_then_read()) == ("EIO", b"acknowledged?")
    assert node.disk.fault_counts["fsync_error"] == 1
    node.crash()
    assert node.run(fs.read_file("/g")) == b""


def test_a_retried_fsync_succeeds_and_the_data_is_still_lost() -> None:
    """The fsyncgate trap: the second fsync has nothing left to sync."""
    config = fs.DiskConfig(fsync_error_probability=0.5)

    async def write_fsync_retry() -> tuple[str, str]:
        first = await _write_and_fsync(b"v1")
        async with await fs.open("/g", "r+") as f:
            try:
                await f.fsync()
            except OSError:
                return first, "EIO"
        return first, "ok"

    outcomes = {}
    for seed in range(40):
        node = Node(seed=seed, config=config)
        outcome = node.run(write_fsync_retry())
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == ("EIO", "ok"):
            node.crash()
            assert node.run(fs.read_file("/g")) == b""  # the retry made nothing durable
        if outcome[0] == "ok":
            node.crash()
            assert node.run(fs.read_file("/g")) == b"v1"
    assert outcomes.get(("EIO", "ok"), 0) >= 5 and outcomes.get(("ok", "ok"), 0) >= 5


def test_fsync_errors_are_off_by_default() -> None:
    node = Node()
    assert node.run(_write_and_fsync(b"x" * 100)) == "ok"
    node.crash()
    assert node.run(fs.read_file("/g")) == b"x" * 100
