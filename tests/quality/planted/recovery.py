"""A damaged file recovered wrongly: a log store whose disk returns a flipped bit.

A single-node store appends each write to a log (length, CRC-32, payload)
and fsyncs before it acknowledges. On restart it reads the log back; a
record whose checksum fails is taken for the torn tail a crash leaves and
the log is cut there. The buggy store trusts one read: a read that came
back with a bit flipped (a bad sector, a cable, a DMA error: the stored
data is intact) makes it cut away acknowledged records. The correct store
reads again when a checksum fails and keeps the longest prefix any read
validated: a torn tail fails every time, a damaged read does not.
"""

from __future__ import annotations

import asyncio
import struct
import zlib
from typing import Any

from tests.quality.planted._defaults import options, run_scenario
from tests.quality.planted._net import until_hang_up

from seedbed import FaultProfile, Scenario, Simulation, fs

PORT = 7500
LOG = "/log"
HEADER = struct.Struct(">II")  # payload length, CRC-32 of the payload
READS = 20  # reads of a log whose checksum failed before taking the failure as real
KEYS = 30


def valid_prefix(data: bytes) -> tuple[int, dict[str, str]]:
    """The bytes of whole, valid records at the start of `data`, and what they hold."""
    offset, table = 0, {}
    while offset + HEADER.size <= len(data):
        length, crc = HEADER.unpack_from(data, offset)
        payload = data[offset + HEADER.size : offset + HEADER.size + length]
        if length == 0 or len(payload) < length or zlib.crc32(payload) != crc:
            break
        key, _, value = payload.decode("utf-8", "replace").partition("=")
        table[key] = value
        offset += HEADER.size + length
    return offset, table


class LogStore:
    def __init__(self, reread: bool) -> None:
        self.reread = reread
        self.table: dict[str, str] = {}
        self.file: Any = None

    async def open(self) -> None:
        if not await fs.exists(LOG):
            async with await fs.open(LOG, "w") as created:
                await created.fsync()
            await fs.fsync_dir("/")
        self.file = await fs.open(LOG, "r+")
        size = await self.file.size()
        end, self.table = await self.recover(size)
        if end < size:  # cut the torn tail, durably, before appending after it
            await self.file.truncate(end)
            await self.file.fsync()
        self.file.seek(end)

    async def recover(self, size: int) -> tuple[int, dict[str, str]]:
        best: tuple[int, dict[str, str]] = (-1, {})
        for _ in range(READS if self.reread else 1):
            found = valid_prefix(await self.file.pread(size, 0))
            best = max(best, found, key=lambda prefix: prefix[0])
            if best[0] == size:
                break  # the whole log checks: nothing to read again
        return best

    async def put(self, key: str, value: str) -> None:
        payload = f"{key}={value}".encode()
        await self.file.write(HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
        await self.file.fsync()
        self.table[key] = value


def database(reread: bool) -> Any:
    async def main() -> None:
        store = LogStore(reread)
        await store.open()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                op, key, *value = line.decode().split()
                if op == "put":
                    await store.put(key, value[0])
                    writer.write(b"ok\n")
                else:
                    writer.write(f"{store.table.get(key, '-')}\n".encode())
                await writer.drain()

        server = await asyncio.start_server(until_hang_up(handle), "0.0.0.0", PORT)
        await server.serve_forever()

    return main


async def request(line: str) -> str:
    """One request on a fresh connection, retried until answered (the store restarts)."""
    while True:
        writer = None
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("db", PORT), 0.1)
            writer.write(line.encode() + b"\n")
            answer = await asyncio.wait_for(reader.readline(), 0.1)
            if answer:
                return answer.decode().strip()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            if writer is not None:
                writer.close()
        await asyncio.sleep(0.05)


async def app() -> int:
    acknowledged = {}
    for number in range(KEYS):
        key, value = f"user{number}", f"v{number * 7}"
        await request(f"put {key} {value}")
        acknowledged[key] = value
        await asyncio.sleep(0.05)
    for key, value in acknowledged.items():
        kept = await request(f"get {key}")
        assert kept == value, f"an acknowledged write was lost: {key} is {kept!r}"
    return len(acknowledged)


def scenario(buggy: bool) -> Scenario:
    def setup(sim: Simulation) -> None:
        sim.host("db", database(reread=not buggy))
        sim.client("app", app)

    faults = FaultProfile(crash_per_second=2.0, disk_corruption_per_second=1.0,
                          downtime_mean=0.1, fault_duration_mean=0.5, max_down=1)  # fmt: skip
    name = "recovery_" + ("buggy" if buggy else "correct")
    return Scenario(name, setup, faults=faults, duration=30.0, **options())


def run(seed: int, buggy: bool) -> str | None:
    return run_scenario(scenario(buggy), seed)
