"""The per-sector crash model of seedbed.fs: what a crash may leave of unsynced writes.

Each sector an unsynced write touched gets its new bytes, keeps its old ones
(zeros past the old end) or holds garbage where the writes put bytes; the
length keeps the writes' extent or is cut back. Fsynced data never changes.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from _disknode import Node, pwrite
from hypothesis import given, settings
from hypothesis import strategies as st

from seedbed import fs
from seedbed._core.trace import Trace

SECTOR = 512


def crash_after_unsynced(seed: int, durable: bytes, writes: list[tuple[int, bytes]]) -> Node:
    node = Node(seed)
    node.run(fs.write_file("/f", durable, durable=True))
    for offset, data in writes:
        node.run(pwrite("/f", data, offset))
    node.crash()
    return node


def sector_fate(after: bytes, old: bytes, new: bytes, sector: int) -> str:
    low, high = sector * SECTOR, (sector + 1) * SECTOR
    got = after[low:high]
    if got == new[low:high][: len(got)]:
        return "new"
    if got == (old + bytes(len(new)))[low:high][: len(got)]:
        return "old"
    return "garbage"


# -- what a crash may do ------------------------------------------------------------


def test_each_sector_settles_on_its_own_and_every_fate_and_length_occurs() -> None:
    old = b"o" * 700
    data = bytes(range(1, 256)) * 8  # 2040 bytes at 700..2740: sectors 1..5
    new = old + data
    fates: set[str] = set()
    lengths: set[int] = set()
    for seed in range(60):
        after = crash_after_unsynced(seed, old, [(700, data)]).read()
        assert after[:512] == old[:512]  # a sector no unsynced write touched
        assert after[512:700] == old[512:700]  # fsynced bytes of a touched sector
        assert len(old) <= len(after) <= len(new)
        fates.update(sector_fate(after, old, new, s) for s in range(1, -(-len(after) // SECTOR)))
        lengths.add(len(after))
    assert fates == {"new", "old", "garbage"}
    assert len(new) in lengths and len(lengths) > 2  # kept, and cut back to various sectors


def test_earlier_unsynced_writes_can_survive_and_a_later_one_be_lost() -> None:
    seen = set()
    for seed in range(40):
        node = crash_after_unsynced(seed, b"", [(0, b"1" * SECTOR), (SECTOR, b"2" * SECTOR)])
        seen.add(node.read())
    assert b"1" * SECTOR in seen  # the first survived, the second was cut back
    assert b"1" * SECTOR + bytes(SECTOR) in seen  # the length kept, the second sector stale
    assert b"1" * SECTOR + b"2" * SECTOR in seen


def test_an_append_can_keep_its_length_with_a_hole_of_zeros() -> None:
    """The case a length check cannot catch: the size made it, the data did not."""
    holes = 0
    for seed in range(40):
        after = crash_after_unsynced(seed, b"", [(0, b"x" * 3 * SECTOR)]).read()
        if len(after) == 3 * SECTOR and after != b"x" * 3 * SECTOR:
            holes += 1
    assert holes > 5


def test_an_unsynced_truncation_may_or_may_not_reach_the_disk() -> None:
    seen = set()
    for seed in range(20):
        node = Node(seed)
        node.run(fs.write_file("/f", b"keep", durable=True))
        node.run(fs.write_file("/f", b""))
        node.crash()
        seen.add(node.read())
    assert seen == {b"keep", b""}


def test_no_tearing_keeps_every_unsynced_write_and_prefix_model_is_seedbed_0_1() -> None:
    data = b"z" * 3 * SECTOR
    for seed in range(10):
        node = Node(seed, fs.DiskConfig(torn_sector_probability=0.0))
        node.run(fs.write_file("/f", b"", durable=True))
        node.run(pwrite("/f", data, 0))
        node.crash()
        assert node.read() == data
        node = Node(seed, fs.DiskConfig(tear_model="prefix"))
        node.run(fs.write_file("/f", b"", durable=True))
        node.run(pwrite("/f", data, 0))
        node.crash()
        after = node.read()
        assert len(after) % SECTOR == 0 and after == data[: len(after)]


def test_the_trace_records_each_sectors_fate_and_the_counts_match() -> None:
    old, data = b"", bytes(range(1, 256)) * 12  # six sectors
    for seed in range(20):
        trace = Trace(keep=True)
        node = Node(seed, trace=trace)
        node.run(fs.write_file("/f", old, durable=True))
        node.run(pwrite("/f", data, 0))
        node.crash()
        after = node.read()
        assert trace.events is not None
        draws = {str(e[2]): e[3] for e in trace.events if e[0] == "draw" and "torn" in str(e[2])}
        length = len(after)
        for sector in range(6):
            label = f"disk n1 torn /f sector {sector}"
            torn = draws[label]
            garbage = draws.get(f"{label} garbage")
            if sector * SECTOR >= length:
                continue  # cut back: whatever its fate, the sector is gone
            fate = sector_fate(after, old, data, sector)
            expected = "new" if not torn else "garbage" if garbage else "old"
            assert fate == expected, (seed, sector, draws)
        torn_inside = sum(
            1
            for sector in range(6)
            if draws[f"disk n1 torn /f sector {sector}"] and sector * SECTOR < length
        )
        assert node.disk.fault_counts["torn_sector"] == torn_inside
        assert node.disk.fault_counts["torn_write"] == (1 if torn_inside else 0)


# -- a write-ahead log: what the model is for ---------------------------------------


def frame(payload: bytes) -> bytes:
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def recover(log: bytes, *, verify: bool) -> list[bytes]:
    """Read records until the log ends; `verify` checks each record's checksum too."""
    records, offset = [], 0
    while offset + 8 <= len(log):
        size, crc = struct.unpack_from("<II", log, offset)
        payload = log[offset + 8 : offset + 8 + size]
        if size == 0 or len(payload) < size or (verify and zlib.crc32(payload) != crc):
            break
        records.append(payload)
        offset += 8 + size
    return records


PAYLOADS = [bytes([65 + i]) * n for i, n in enumerate([300, 900, 200, 600])]


def log_survives_a_crash(seed: int, *, verify: bool) -> bool:
    """One synced record, three unsynced, a crash: recovery must give a prefix with the first."""

    async def append_records() -> None:
        async with await fs.open("/wal", "a") as f:
            for i, payload in enumerate(PAYLOADS):
                await f.write(frame(payload))
                if i == 0:
                    await f.fsync()

    node = Node(seed)
    node.run(fs.write_file("/wal", b"", durable=True))
    node.run(append_records())
    node.crash()
    records = recover(node.read("/wal"), verify=verify)
    return len(records) >= 1 and records == PAYLOADS[: len(records)]


def test_a_log_checking_only_lengths_is_caught_within_200_seeds() -> None:
    assert not all(log_survives_a_crash(seed, verify=False) for seed in range(200))


def test_a_log_checking_a_checksum_per_record_survives_1000_seeds() -> None:
    failing = [seed for seed in range(1000) if not log_survives_a_crash(seed, verify=True)]
    assert failing == []


# -- sparing one replica -------------------------------------------------------------


def sectors_lost_everywhere(seed: int, *, spare: bool) -> list[int]:
    """Sectors of an unsynced write that no replica has after a crash of all three."""
    data = bytes(range(1, 256)) * 8  # four sectors
    config = fs.DiskConfig(spare_one_replica=spare, torn_sector_probability=0.7)
    coordinator = fs.FaultCoordinator() if spare else None
    nodes = [Node(seed, config, name=n, coordinator=coordinator) for n in ("n1", "n2", "n3")]
    for node in nodes:
        node.run(fs.write_file("/wal", b"", durable=True))
    afters = []
    for node in nodes:
        node.run(pwrite("/wal", data, 0))
        node.crash()
        afters.append(node.read("/wal"))

    def kept_somewhere(sector: int) -> bool:
        low, high = sector * SECTOR, (sector + 1) * SECTOR
        return any(after[low:high] == data[low:high] for after in afters)

    return [sector for sector in range(4) if not kept_somewhere(sector)]


def test_sparing_one_replica_keeps_every_sector_of_a_write_on_some_replica() -> None:
    assert not any(sectors_lost_everywhere(seed, spare=True) for seed in range(40))
    assert any(sectors_lost_everywhere(seed, spare=False) for seed in range(40))


# -- the property: fsynced data never changes ------------------------------------------

SMALL = 16  # small sectors, so writes share sectors with fsynced bytes

operation = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 100), st.integers(1, 40), st.integers(1, 255)),
    st.tuples(st.just("append"), st.integers(1, 40), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 120)),
    st.tuples(st.just("fsync")),
    st.tuples(st.just("crash")),
)
chances = st.sampled_from([0.0, 0.3, 1.0])


class Expected:
    """What must survive: the fsynced bytes, minus what was written or truncated since."""

    def __init__(self) -> None:
        self.synced = b""
        self.changed: set[int] = set()  # byte offsets written since the last fsync
        self.floor = 0  # offsets below this were not truncated away since the last fsync

    def reset(self, synced: bytes) -> None:
        self.synced, self.changed, self.floor = synced, set(), len(synced)

    def check(self, after: bytes) -> None:
        assert len(after) >= self.floor
        for i in range(self.floor):
            if i not in self.changed:
                assert after[i] == self.synced[i], f"fsynced byte {i} changed"


async def apply_op(op: tuple[Any, ...], expected: Expected) -> None:
    async with await fs.open("/f", "r+") as f:
        size = await f.size()
        if op[0] == "write":
            _, offset, length, byte = op
            await f.pwrite(bytes([byte]) * length, offset)
            expected.changed.update(range(offset, offset + length))
        elif op[0] == "append":
            _, length, byte = op
            await f.append(bytes([byte]) * length)
            expected.changed.update(range(size, size + length))
        elif op[0] == "truncate":
            await f.truncate(op[1])
            expected.floor = min(expected.floor, op[1])
        else:
            await f.fsync()
            expected.reset(await f.pread(-1, 0))


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    ops=st.lists(operation, max_size=25),
    torn=chances,
    garbage=chances,
    keep=chances,
    model=st.sampled_from(["sector", "prefix"]),
)
def test_no_crash_ever_changes_fsynced_data(
    seed: int, ops: list[tuple[Any, ...]], torn: float, garbage: float, keep: float, model: str
) -> None:
    config = fs.DiskConfig(
        sector_size=SMALL,
        torn_sector_probability=torn,
        torn_garbage_probability=garbage,
        torn_keep_length_probability=keep,
        tear_model=model,
    )
    node = Node(seed, config)
    node.run(fs.write_file("/f", b"", durable=True))
    expected = Expected()
    for op in [*ops, ("crash",)]:
        if op[0] == "crash":
            node.crash()
            after = node.read()
            expected.check(after)
            expected.reset(after)
        else:
            node.run(apply_op(op, expected))
