"""The swarm classes of issue 24 that damage disks and skew clocks: each fires, is
effective, and is sound (only what a real disk or clock could do)."""

from __future__ import annotations

import asyncio
import itertools
import time
import zlib
from typing import Any

import pytest

import seedbed
from seedbed import FaultProfile, Scenario, Simulation, UsageError, fs
from seedbed._core import Entropy, Trace
from seedbed.faults._classes import FAULT_CLASSES
from seedbed.faults._injectors import DRIFT_MAX, SKEW_STEP_MAX
from seedbed.faults._profile import ADDED_FIELDS, swarm_settings

SIZE = 64  # bytes per record: a payload and its CRC-32


def record(n: int) -> bytes:
    body = b"record %08d " % n
    body += b"." * (SIZE - 4 - len(body))
    return body + zlib.crc32(body).to_bytes(4, "big")


def intact(data: bytes, n: int) -> bool:
    return data[n * SIZE : (n + 1) * SIZE] == record(n)


def _appender(seen: dict[str, Any]) -> Any:
    """A host that appends checksummed records to a fresh segment per incarnation (and
    after each failed fsync), noting per segment how many records an fsync acknowledged,
    and re-reading what it wrote, counting the reads whose checksum fails."""

    async def main() -> None:
        me = seedbed.current_node()
        while True:
            segment = seen.setdefault("segments", 0)
            seen["segments"] += 1
            path = f"/{me}-{segment}"
            try:
                await fs.write_file(path, b"", durable=True)
                async with await fs.open(path, "r+") as f:
                    for n in range(10_000):
                        await f.pwrite(record(n), n * SIZE)
                        await f.fsync()
                        seen.setdefault("acked", {})[path] = n + 1
                        back = await f.pread(SIZE, n * SIZE)
                        crc_ok = zlib.crc32(back[:-4]).to_bytes(4, "big") == back[-4:]
                        seen["bad reads"] = seen.get("bad reads", 0) + (not crc_ok)
                        await asyncio.sleep(0.01)
            except OSError:
                await asyncio.sleep(0.01)  # a failed fsync lost the segment: start another

    return main


def _damage_world(seen: dict[str, Any]) -> Any:
    def setup(sim: Simulation) -> None:
        seen["sim"] = sim
        for name in ("h1", "h2", "h3"):
            sim.host(name, _appender(seen))

    return setup


def _damaged(seed: int, **rates: float) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    seen: dict[str, Any] = {}
    profile = FaultProfile(**rates)
    result = Scenario("damage", _damage_world(seen), faults=profile, duration=10.0).run(seed=seed)
    return seen, result.faults


def test_corrupted_reads_are_caught_by_a_checksum_and_counted_effective() -> None:
    seen, faults = _damaged(1, disk_corruption_per_second=1.0)
    assert faults["disk_corruption"]["effective"] >= 1, faults
    assert seen["bad reads"] >= faults["disk_corruption"]["effective"]
    _check_durable(seen)  # read damage leaves what is stored intact


def test_fsync_failures_lose_only_unacknowledged_records() -> None:
    seen, faults = _damaged(2, fsync_failure_per_second=1.0)
    assert faults["fsync_failure"]["effective"] >= 1, faults
    assert seen["segments"] > 3  # each failure started a new segment
    _check_durable(seen)


def test_misdirected_writes_move_stored_bytes_and_say_so() -> None:
    seen, faults = _damaged(3, misdirected_write_per_second=1.0)
    assert faults["misdirected_write"]["effective"] >= 1, faults
    disks = [node.disk for node in seen["sim"].nodes.all()]
    assert sum(disk.fault_counts["misdirect_write"] for disk in disks) >= 1


@pytest.mark.parametrize("seed", range(4))
def test_no_fsynced_byte_changes_without_a_recorded_misdirection(seed: int) -> None:
    seen, faults = _damaged(
        seed,
        crash_per_second=0.3,
        operation_crash_per_second=0.5,
        disk_corruption_per_second=0.5,
        fsync_failure_per_second=0.5,
        disk_fault_per_second=0.3,
        misdirected_write_per_second=0.2,
    )
    assert sum(count["injected"] for count in faults.values()) >= 5
    _check_durable(seen)


def _check_durable(seen: dict[str, Any]) -> None:
    """Every acknowledged record is in its segment's durable bytes, on every disk
    that recorded no misdirected write (the one fault that moves stored bytes)."""
    checked = 0
    for node in seen["sim"].nodes.all():
        disk = node.disk
        if disk.fault_counts["misdirect_write"]:
            continue
        for path, acked in seen.get("acked", {}).items():
            if not path.startswith(f"/{node.name}-"):
                continue
            file = disk._model.file((path[1:],))  # white box: the durable bytes themselves
            assert file is not None, path
            durable = bytes(file.durable)
            assert all(intact(durable, n) for n in range(acked)), (path, acked)
            checked += acked
    assert checked > 0


# -- clocks ---------------------------------------------------------------------


def test_a_drift_alone_keeps_the_wall_clock_continuous_and_at_its_rate() -> None:
    reads: list[tuple[float, float]] = []

    async def node() -> None:
        for _ in range(3):
            reads.append((time.monotonic(), time.time()))
            await asyncio.sleep(10.0)

    sim = Simulation(seed=0)
    sim.host("n1", node)
    sim.advance(5.0)
    assert sim.skew_clock("n1", 2e-4)  # 200 ppm fast from 5 s on, no step
    sim.advance(30.0)
    sim.run(max_time=sim.loop.time())  # end the world: its tasks close, none left pending
    (m0, w0), (m1, w1), (m2, w2) = reads
    assert abs((w1 - w0) - (m1 - m0) - 5.0 * 2e-4) < 1e-6  # half the interval fast
    assert abs((w2 - w1) / (m2 - m1) - (1 + 2e-4)) < 1e-7


def test_a_skew_step_moves_only_the_wall_clock() -> None:
    reads: list[tuple[float, float]] = []

    async def node() -> None:
        for _ in range(2):
            reads.append((time.monotonic(), time.time()))
            await asyncio.sleep(1.0)

    sim = Simulation(seed=0)
    sim.host("n1", node)
    sim.advance(0.5)
    assert sim.skew_clock("n1", 0.0, step=-0.25)
    sim.advance(2.0)
    sim.run(max_time=sim.loop.time())
    (m0, w0), (m1, w1) = reads
    assert m1 - m0 == pytest.approx(1.0, abs=2e-3)  # CPU costs and the 1 ms clock tick aside
    # time.time() is a float near 1.7e9: a quarter-microsecond apart
    assert (w1 - w0) - (m1 - m0) == pytest.approx(-0.25, abs=1e-6)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda sim: sim.skew_clock("n1", 0.5),
         "Simulation.skew_clock(drift=...) must be a number in (-0.5, 0.5), got 0.5"),
        (lambda sim: sim.skew_clock("n1", 0.0, step=float("nan")),
         "Simulation.skew_clock(step=...) must be a number in"),
        (lambda sim: sim.degrade_disk("n1"), "Simulation.degrade_disk() needs error_probability"),
        (lambda sim: sim.degrade_disk("n1", corrupt_read=2),
         "Simulation.degrade_disk(corrupt_read=...) must be a probability in (0, 1], got 2"),
    ],
)  # fmt: skip
def test_a_bad_clock_or_disk_verb_is_a_one_line_usage_error(call: Any, message: str) -> None:
    async def idle() -> None:
        await asyncio.sleep(10)

    sim = Simulation(seed=0)
    sim.host("n1", idle)
    sim.advance(0.1)
    with pytest.raises(UsageError) as info:
        call(sim)
    sim.run(max_time=sim.loop.time())
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_skewed_clocks_stay_within_a_crystals_bounds_and_monotonic_never_goes_back() -> None:
    samples: dict[str, list[tuple[float, float]]] = {}
    seen: dict[str, Any] = {}

    def setup(sim: Simulation) -> None:
        seen["sim"] = sim

        async def node() -> None:
            mine = samples.setdefault(seedbed.current_node() or "", [])
            while True:
                mine.append((time.monotonic(), time.time()))
                await asyncio.sleep(0.005)

        for name in ("h1", "h2", "h3"):
            sim.host(name, node)

    profile = FaultProfile(clock_skew_per_second=3.0)
    result = Scenario("skew", setup, faults=profile, duration=10.0).run(seed=7)
    counts = result.faults["clock_skew"]
    assert counts["injected"] >= 10 and counts["effective"] == counts["injected"]
    for node in seen["sim"].nodes.all():
        assert abs(node.ref.wall_rate - 1.0) <= DRIFT_MAX
    for series in samples.values():
        monotonic = [m for m, _ in series]
        assert monotonic == sorted(monotonic)
        for (m0, w0), (m1, w1) in itertools.pairwise(series):
            # each 5 ms interval: the drift, plus at most a skew step or two
            assert abs((w1 - w0) - (m1 - m0)) <= 2 * SKEW_STEP_MAX + 1e-6
    stepped = sum(
        1
        for series in samples.values()
        for (m0, w0), (m1, w1) in itertools.pairwise(series)
        if abs((w1 - w0) - (m1 - m0)) > 1e-5
    )
    assert 1 <= stepped <= counts["injected"]


# -- swarm's streams ------------------------------------------------------------------


def test_the_issue_24_classes_changed_no_earlier_classs_swarm_draw() -> None:
    earlier = tuple(fault for fault in FAULT_CLASSES if fault.field not in ADDED_FIELDS)
    assert len(earlier) == len(FAULT_CLASSES) - len(ADDED_FIELDS)
    on = dict.fromkeys(ADDED_FIELDS, 0)
    for seed in range(100):
        full = swarm_settings(Entropy(seed, Trace()), FAULT_CLASSES)
        for field in ADDED_FIELDS:
            on[field] += field in full
            full.pop(field, None)
        assert full == swarm_settings(Entropy(seed, Trace()), earlier), seed
    assert all(30 < count < 70 for count in on.values()), on


def test_a_profile_with_the_new_classes_off_is_traced_as_before() -> None:
    profile = FaultProfile(crash_per_second=0.5)
    assert set(profile.as_dict()) - set(profile.traced()) == ADDED_FIELDS
    assert FaultProfile(clock_skew_per_second=0.1).traced()["clock_skew_per_second"] == 0.1
