"""kvstore's parts on their own: frames, storage recovery, the state machine."""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from pathlib import Path

import pytest
from _disknode import Node
from examples.kvstore import bugs, frames
from examples.kvstore import storage as storage_module
from examples.kvstore.machine import Machine
from examples.kvstore.storage import Storage
from examples.kvstore.transport import Mailbox, parse_peers

from seedbed import fs


def test_a_frame_round_trips_through_a_stream() -> None:
    async def main() -> object:
        reader = asyncio.StreamReader()
        reader.feed_data(frames.encode({"type": "x", "n": 1}) + frames.encode({"type": "y"}))
        reader.feed_eof()
        return [await frames.read_frame(reader) for _ in range(3)]

    assert asyncio.run(main()) == [{"type": "x", "n": 1}, {"type": "y"}, None]


def test_a_frame_whose_body_comes_later_waits_for_it() -> None:
    frame = frames.encode({"type": "x", "n": 1})

    async def main() -> object:
        reader = asyncio.StreamReader()
        reader.feed_data(frame[: frames.HEADER.size + 3])
        reading = asyncio.ensure_future(frames.read_frame(reader))
        await asyncio.sleep(0)
        assert not reading.done()
        reader.feed_data(frame[frames.HEADER.size + 3 :] + frame)
        return [await reading, await frames.read_frame(reader)]

    assert asyncio.run(main()) == [{"type": "x", "n": 1}] * 2


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (struct.pack(">II", frames.MAX_FRAME + 1, 0), "exceeds the maximum"),
        (frames.encode({"a": 1})[:-2], "stream ended inside a frame"),
        (b"\x00\x00", "inside a frame header"),
        (frames.encode({"a": 1})[:-1] + b"!", "checksum mismatch"),
        (struct.pack(">II", 3, zlib.crc32(b"abc")) + b"abc", "not JSON"),
    ],
)
def test_a_bad_frame_is_refused_with_its_reason(data: bytes, reason: str) -> None:
    async def main() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        await frames.read_frame(reader)

    with pytest.raises(frames.FrameError, match=reason):
        asyncio.run(main())


_MESSAGES = [
    {"type": "request", "command": {"op": "put", "key": "k\u00e9y", "value": 'v"\n'}},
    {"type": "append", "term": 3, "prev": [4, 2], "commit": 0.5, "ok": True, "none": None},
    {"type": "vote", "term": -1, "big": 1 << 70, "empty": {}, "list": [[], [1.0e300, -0.0]]},
]


@pytest.mark.parametrize("message", _MESSAGES)
def test_a_frame_holds_the_text_json_dumps_gives(message: dict[str, object]) -> None:
    body = frames.encode(message)[frames.HEADER.size :]
    assert body == json.dumps(message, separators=(",", ":")).encode()
    assert frames.decode_body(body, zlib.crc32(body)) == message


@pytest.mark.parametrize(
    "text", ["", " ", ' {"a":1}', '{"a":1} ', '{"a":1}x', '{"a":}', "[1]", '{"a":1}{"b":2}', "nul"]
)
def test_a_body_decodes_as_json_decoder_decodes_it(text: str) -> None:
    body = text.encode()
    try:
        expected: object = json.JSONDecoder().decode(text)
    except ValueError as exc:
        expected = f"frame body is not JSON: {exc}"
    try:
        got: object = frames.decode_body(body, zlib.crc32(body))
    except frames.FrameError as exc:
        got = str(exc)
    if isinstance(expected, list):
        expected = "frame body is a list, not a JSON object"
    assert got == expected


def test_a_mailbox_wakes_its_one_consumer_in_order() -> None:
    async def main() -> object:
        box = Mailbox(limit=2)
        box.put(1)
        got = [await box.get()]
        waiting = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        second = asyncio.ensure_future(box.get())
        with pytest.raises(RuntimeError, match="one consumer"):
            await second
        box.put(2)
        box.put(3)
        got.append(await waiting)
        box.put(4)
        box.put(5)  # beyond the limit: the oldest (3) goes
        drained = [box.drain(), box.drain()]
        cancelled = asyncio.ensure_future(box.get())
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.sleep(0)
        box.put(6)  # a cancelled wait leaves the mailbox to the next get
        return [*got, *drained, await box.get()]

    assert asyncio.run(main()) == [1, 2, [4, 5], [], 6]


def test_a_torn_tail_is_benign_but_damage_before_the_end_is_not() -> None:
    one, two = frames.encode({"index": 1}), frames.encode({"index": 2})
    assert frames.decode_records(one + two[:5]) == ([{"index": 1}], len(one), True)
    flipped = one[:-1] + bytes([one[-1] ^ 1])
    assert frames.decode_records(flipped + two) == ([], 0, False)


def _entries(first: int, last: int, term: int = 1) -> list[dict[str, object]]:
    return [{"index": i, "term": term, "cmd": {"op": "noop"}} for i in range(first, last + 1)]


def test_storage_recovers_its_vote_log_and_snapshot(tmp_path: Path) -> None:
    async def main() -> object:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.save_meta(3, "n2")
        await storage.append(_entries(1, 5))
        await storage.truncate_from(4)
        await storage.append(_entries(4, 6, term=3))
        await storage.save_snapshot({"index": 4, "term": 3, "state": {}}, _entries(5, 6, 3))
        await storage.append(_entries(7, 7, term=3))
        await storage.close()
        return await Storage(str(tmp_path)).load()

    recovered = asyncio.run(main())
    assert (recovered.term, recovered.vote, recovered.damaged) == (3, "n2", False)
    assert recovered.snapshot == {"index": 4, "term": 3, "state": {}}
    assert [e["index"] for e in recovered.entries] == [5, 6, 7]


def test_storage_drops_damage_that_runs_to_the_end_as_a_torn_tail(tmp_path: Path) -> None:
    async def main() -> object:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.append(_entries(1, 3))
        await storage.close()
        log = tmp_path / "log"
        data = log.read_bytes()
        one = frames.HEADER.size + frames.HEADER.unpack_from(data)[0]
        rest = bytes(byte ^ 0x5A for byte in data[one:])  # torn: the rest never checks out
        log.write_bytes(data[:one] + rest)
        return await Storage(str(tmp_path)).load()

    recovered = asyncio.run(main())
    assert [e["index"] for e in recovered.entries] == [1]  # type: ignore[attr-defined]
    assert not recovered.damaged and recovered.bound == (0, 0)  # type: ignore[attr-defined]


def test_storage_trusts_a_corrupt_record_only_with_the_planted_bug(tmp_path: Path) -> None:
    async def main() -> object:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.append([{"index": 1, "term": 1, "cmd": {"op": "put", "value": "abc"}}])
        await storage.close()
        log = tmp_path / "log"
        log.write_bytes(log.read_bytes().replace(b"abc", b"abd"))
        return await Storage(str(tmp_path)).load()

    assert asyncio.run(main()).entries == []  # type: ignore[attr-defined]
    with bugs.planting("trust_without_checksum"):
        entries = asyncio.run(main()).entries  # type: ignore[attr-defined]
    assert entries[0]["cmd"]["value"] == "abd"


def test_the_machine_applies_writes_and_deduplicates_retries() -> None:
    machine = Machine()
    assert machine.apply(1, {"op": "put", "key": "k", "value": "a", "client": "c", "seq": 1})
    machine.apply(2, {"op": "append", "key": "k", "value": "b", "client": "c", "seq": 2})
    machine.apply(3, {"op": "append", "key": "k", "value": "b", "client": "c", "seq": 2})
    assert machine.read("k") == {"value": ["a", "b"], "version": 2}
    restored = Machine.restore(machine.snapshot())
    assert restored.read("k") == machine.read("k")


def test_a_transaction_aborts_when_a_key_it_read_changed() -> None:
    machine = Machine()
    machine.apply(1, {"op": "append", "key": "x", "value": "1"})
    stale = {"op": "txn", "reads": [["x", 0], ["y", 0]], "writes": [["append", "y", "2"]]}
    assert machine.apply(2, stale) == {"committed": False, "conflict": "x", "index": 2}
    assert machine.read("y")["value"] == []
    fresh = {"op": "txn", "reads": [["x", 1]], "writes": [["append", "y", "2"]]}
    assert machine.apply(3, fresh)["committed"]
    write_skew = {"op": "txn", "reads": [["x", 0]], "writes": [["append", "y", "3"]]}
    assert not machine.apply(4, write_skew)["committed"]
    with bugs.planting("skip_read_validation"):
        assert machine.apply(5, write_skew)["committed"]


def test_peers_are_parsed_in_order_and_bad_ones_named() -> None:
    assert parse_peers("n1=127.0.0.1:1,n2=h:2") == {"n1": ("127.0.0.1", 1), "n2": ("h", 2)}
    with pytest.raises(ValueError, match="bad peer 'n1=nohost'"):
        parse_peers("n1=nohost")
    with pytest.raises(ValueError, match="appears twice"):
        parse_peers("n1=a:1,n1=b:2")


def _damage_record(path: Path, record: int) -> None:
    """Flip a bit inside the body of the `record`-th frame (0-based) of a log file."""
    data = bytearray(path.read_bytes())
    offset = 0
    for _ in range(record):
        offset += frames.HEADER.size + frames.HEADER.unpack_from(data, offset)[0]
    data[offset + frames.HEADER.size + 3] ^= 0x40
    path.write_bytes(bytes(data))


def test_records_after_a_damaged_one_are_salvaged_by_their_checksums() -> None:
    records = [frames.encode({"index": i, "term": 2}) for i in range(1, 5)]
    data = bytearray(b"".join(records))
    data[len(records[0]) + 2] ^= 0xFF  # the second record's length: where the third starts is lost
    found = frames.salvage_records(bytes(data), len(records[0]))
    assert [record["index"] for record in found] == [3, 4]
    assert frames.salvage_records(bytes(data[: len(records[0]) + 9]), len(records[0])) == []


@pytest.mark.parametrize(
    "record", [0, 2]
)  # the first record (nothing valid before it), a middle one
def test_a_log_that_lost_a_middle_record_keeps_its_last_entry_as_a_vote_bound(
    tmp_path: Path, record: int
) -> None:
    # Damage at the log's first record once left no read kept (its valid prefix
    # was empty), so the salvage scanned no bytes and the whole log, fsynced and
    # acknowledged, was dropped as "a torn tail after 0 records".
    async def main() -> tuple[object, object]:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.save_meta(4, "n1")
        await storage.append(_entries(1, 5, term=4))
        await storage.close()
        _damage_record(tmp_path / "log", record)  # index record + 1
        first = await Storage(str(tmp_path)).load()
        second = await Storage(str(tmp_path)).load()  # a crash before any repair
        return first, second

    first, second = asyncio.run(main())
    for recovered in (first, second):
        assert [e["index"] for e in recovered.entries] == list(range(1, record + 1))  # type: ignore[attr-defined]
        assert recovered.bound == (4, 5) and not recovered.damaged  # type: ignore[attr-defined]
        assert (recovered.term, recovered.vote) == (4, "n1")  # type: ignore[attr-defined]


def test_a_lost_meta_file_is_damage_remembered_across_a_second_crash(tmp_path: Path) -> None:
    async def main() -> tuple[object, object]:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.save_meta(2, "n3")
        await storage.append(_entries(1, 3))
        await storage.close()
        (tmp_path / "meta").write_bytes(b"\x00" * 40)  # the vote is gone
        first = await Storage(str(tmp_path)).load()
        second = await Storage(str(tmp_path)).load()  # a crash before any repair
        return first, second

    first, second = asyncio.run(main())
    assert first.damaged and second.damaged  # type: ignore[attr-defined]
    assert [e["index"] for e in second.entries] == [1, 2, 3]  # type: ignore[attr-defined]


def test_short_reads_of_the_log_are_read_again_not_taken_for_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three short reads in a row (buggify's "a short read of the log", which
    # crash_recovery fires) once ended on a record boundary and looked like a
    # whole log: the replica rewrote its log without entries it had acknowledged.
    async def write() -> None:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.append(_entries(1, 4))
        await storage.close()

    asyncio.run(write())
    shorts = [True, True, True]  # then whole reads
    monkeypatch.setattr(storage_module, "buggify", lambda why: bool(shorts) and shorts.pop())
    monkeypatch.setattr(storage_module.random, "randrange", lambda n: 0)  # nothing read
    recovered = asyncio.run(Storage(str(tmp_path)).load())
    assert [e["index"] for e in recovered.entries] == [1, 2, 3, 4]
    assert not shorts


def test_a_log_that_only_ever_reads_short_is_a_disk_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def write() -> None:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.append(_entries(1, 2))
        await storage.close()

    asyncio.run(write())
    monkeypatch.setattr(storage_module, "buggify", lambda why: True)
    monkeypatch.setattr(storage_module.random, "randrange", lambda n: 0)
    with pytest.raises(OSError, match="short reads in a row"):
        asyncio.run(Storage(str(tmp_path)).load())


def _reads(*images: bytes) -> tuple[list[int], object]:
    """A reader returning `images` in turn (the last one from then on), and its count."""
    count = [0]

    async def read() -> bytes:
        count[0] += 1
        return images[min(count[0], len(images)) - 1]

    return count, read


def _flip(data: bytes, position: int) -> bytes:
    return data[:position] + bytes([data[position] ^ 0x10]) + data[position + 1 :]


LOG = b"".join(frames.encode_entry(entry) for entry in _entries(1, 4))
EDGE = len(frames.encode_entry(_entries(1, 1)[0]))  # where the second record starts


@pytest.mark.parametrize("damaged_reads", [1, 3, 10])
def test_reads_flipped_on_the_way_back_are_read_again_until_one_checks_out(
    damaged_reads: int,
) -> None:
    # The disk's corruption fault flips a bit in about one read in two while the
    # bytes at rest stay whole: three damaged reads in a row, each flipped
    # elsewhere, once made a replica drop an acknowledged entry as a torn tail.
    flipped = [_flip(LOG, len(LOG) - 3 - n) for n in range(damaged_reads)]
    count, read = _reads(*flipped, LOG)
    assert asyncio.run(Storage._read_settled(read)) == LOG  # type: ignore[arg-type]
    assert count[0] == damaged_reads + 1


def test_the_same_damage_read_again_and_again_is_damage_at_rest() -> None:
    at_rest = _flip(LOG, EDGE + 9)
    transient = _flip(at_rest, len(LOG) - 2)  # one read flipped on the way back, too
    count, read = _reads(at_rest, transient, at_rest, at_rest, LOG)
    assert asyncio.run(Storage._read_settled(read)) == at_rest  # type: ignore[arg-type]
    assert count[0] == 1 + storage_module.SAME_READS


def test_reads_that_never_agree_end_with_the_longest_valid_prefix_any_showed() -> None:
    images = [_flip(LOG, EDGE + 9 + n) for n in range(storage_module.MAX_READS + 5)]
    images[7] = _flip(LOG, len(LOG) - 2)  # every record but the last checks out
    count, read = _reads(*images)
    assert asyncio.run(Storage._read_settled(read)) == images[7]  # type: ignore[arg-type]
    assert count[0] == storage_module.MAX_READS


def test_a_recovery_through_a_disk_that_flips_bits_on_reads_keeps_every_entry() -> None:
    # Any seed where recovery's reads came back flipped (one in two) must
    # recover the same vote, snapshot and log as with a clean disk, undamaged.
    flipped_seeds = 0
    for seed in range(12):
        node = Node(seed, fs.DiskConfig())

        async def write() -> None:
            storage = Storage("/kv")
            await storage.load()
            await storage.save_meta(3, "n2")
            await storage.save_snapshot({"index": 2, "term": 1, "state": {}}, _entries(3, 3))
            await storage.append(_entries(4, 30, term=3))
            await storage.close()

        node.run(write())
        node.crash()
        node.disk.config = fs.DiskConfig(corrupt_read_probability=0.5)
        recovered = node.run(Storage("/kv").load())
        assert (recovered.term, recovered.vote, recovered.snapshot["index"]) == (3, "n2", 2)
        assert [e["index"] for e in recovered.entries] == list(range(3, 31))
        assert not recovered.damaged and recovered.bound == (0, 0)
        flipped_seeds += node.disk.fault_counts["corrupt_read"] > 0
    assert flipped_seeds >= 10


@pytest.mark.parametrize("leftover", [False, True])
def test_records_after_a_gap_in_the_indexes_are_damage_not_a_torn_tail(
    tmp_path: Path, leftover: bool
) -> None:
    # A misdirected write whose frames land on a record boundary further up the
    # log decodes as valid records after a gap (1, 2, then 5, 6): damage at
    # rest to records that were fsynced and acknowledged, not a torn tail,
    # whether or not the old bytes left after them check out.
    async def main() -> object:
        storage = Storage(str(tmp_path))
        await storage.load()
        await storage.append(_entries(1, 6, term=2))
        await storage.close()
        framed = [frames.encode_entry(entry) for entry in _entries(1, 6, term=2)]
        tail = framed[4][:7] if leftover else b""  # the start of an old record, cut short
        (tmp_path / "log").write_bytes(b"".join([*framed[:2], *framed[4:], tail]))
        return await Storage(str(tmp_path)).load()

    recovered = asyncio.run(main())
    assert [e["index"] for e in recovered.entries] == [1, 2]  # type: ignore[attr-defined]
    assert recovered.bound == (2, 6)  # type: ignore[attr-defined]
    assert [e["index"] for e in recovered.salvaged] == [5, 6]  # type: ignore[attr-defined]
