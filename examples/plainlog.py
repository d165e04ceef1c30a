"""A key-value log kept with plain files, the way a program written for one machine keeps it.

The store knows nothing of seedbed: it appends `key value` lines to a log
with `open(..., "a")`, rewrites a snapshot with a temporary file and
`os.replace`, and answers `PUT`/`GET` over TCP. Its data folder is relative
to the working directory. Run in a simulated node, every one of those calls
reaches the node's simulated disk: nothing appears in the real folder, and
a crash keeps only what was fsynced.

The planted bug: the store never fsyncs (it acknowledges a write as soon as
Python's buffer is flushed to the operating system). A crash then loses or
tears acknowledged writes, and the store's own check, that every
acknowledged key is there after a restart, fails. `plainlog_fixed` fsyncs
the log before acknowledging, and the snapshot and its folder around the
rename:

    seedbed sweep examples.plainlog:plainlog --seeds 60
    seedbed sweep examples.plainlog:plainlog_fixed --seeds 200
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from seedbed import FaultProfile, Scenario, Simulation

PORT = 7100
DATA = "plainlog-data"  # relative, as many programs keep it: under the working directory
CLIENTS = 2
PUTS = 50  # per client
SNAPSHOT_EVERY = 16  # log lines


def encode(key: str, value: str) -> str:
    """A record as this version writes it: `key value` (examples/upgrade.py has others)."""
    return f"{key} {value}\n"


def decode(line: str) -> tuple[str, str] | None:
    """A record read back, or None for a line this version cannot read (a torn one)."""
    key, _, value = line.rstrip("\n").partition(" ")
    return (key, value) if key and value else None


class Store:
    """A log and a snapshot in `DATA`; `durable` is the fix."""

    encode = staticmethod(encode)
    decode = staticmethod(decode)

    def __init__(self, durable: bool) -> None:
        self.durable = durable
        self.data: dict[str, str] = {}
        self.lines = 0
        os.makedirs(DATA, exist_ok=True)
        self.log_path = os.path.join(DATA, "log")
        self.snapshot_path = os.path.join(DATA, "snapshot")

    def recover(self) -> None:
        for path in (self.snapshot_path, self.log_path):
            if os.path.exists(path):
                with open(path) as f:
                    for line in f:
                        record = self.decode(line)
                        if record is not None:  # a torn line is skipped
                            self.data[record[0]] = record[1]

    def put(self, key: str, value: str) -> None:
        with open(self.log_path, "a") as log:
            log.write(self.encode(key, value))
            log.flush()
            if self.durable:
                os.fsync(log.fileno())
        self.data[key] = value
        self.lines += 1
        if self.lines >= SNAPSHOT_EVERY:
            self.snapshot()

    def snapshot(self) -> None:
        temporary = self.snapshot_path + ".tmp"
        with open(temporary, "w") as f:
            f.writelines(self.encode(key, value) for key, value in sorted(self.data.items()))
            f.flush()
            if self.durable:
                os.fsync(f.fileno())
        os.replace(temporary, self.snapshot_path)
        if self.durable:
            folder = os.open(DATA, os.O_RDONLY)
            os.fsync(folder)
            os.close(folder)
        with open(self.log_path, "w") as log:  # the snapshot holds it all now
            if self.durable:
                os.fsync(log.fileno())
        self.lines = 0


@dataclass
class World:
    """What the oracles see: the writes clients were told are done, and what came back."""

    acknowledged: dict[str, str] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)  # acknowledged keys a restart did not find
    finished: int = 0


world = World()


def server(durable: bool, store_class: type[Store] = Store) -> object:
    async def main() -> None:
        store = store_class(durable)  # built inside main: a restart is a fresh process
        store.recover()
        world.lost += [k for k, v in world.acknowledged.items() if store.data.get(k) != v]

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            request = (await reader.readline()).decode().split()
            if request[:1] == ["PUT"]:
                store.put(request[1], request[2])
                writer.write(b"OK\n")
            else:
                writer.write(f"{store.data.get(request[1], '-')}\n".encode())
            await writer.drain()
            writer.close()

        listener = await asyncio.start_server(handle, "0.0.0.0", PORT)
        await listener.serve_forever()

    return main


async def ask(line: str) -> str:
    """One request, retried until the server answers."""
    while True:
        try:
            reader, writer = await asyncio.open_connection("store", PORT)
            writer.write(f"{line}\n".encode())
            answer = await asyncio.wait_for(reader.readline(), timeout=1.0)
            writer.close()
            if answer:
                return answer.decode().strip()
        except (TimeoutError, OSError):
            pass
        await asyncio.sleep(0.1)


def client(name: str) -> object:
    async def main() -> None:
        for i in range(PUTS):
            key = f"{name}-{i}"
            if await ask(f"PUT {key} {i}") == "OK":
                world.acknowledged[key] = str(i)
            await asyncio.sleep(0.1)
        world.finished += 1

    return main


def setup_for(durable: bool) -> object:
    def setup(sim: Simulation) -> None:
        global world
        world = World()  # every run starts from nothing
        sim.host("store", server(durable))
        for k in range(CLIENTS):
            sim.client(f"c{k}", client(f"c{k}"))

    return setup


def nothing_acknowledged_was_lost() -> bool:
    assert not world.lost, f"acknowledged writes missing after a restart: {world.lost[:5]}"
    return True


def clients_finished() -> bool:
    return world.finished == CLIENTS


def make(name: str, durable: bool) -> Scenario:
    return Scenario(
        name,
        setup_for(durable),  # type: ignore[arg-type]
        faults=FaultProfile(crash_per_second=0.4, downtime_mean=0.3),
        duration=8.0,
        invariants=[nothing_acknowledged_was_lost],
        liveness=[clients_finished],
        liveness_timeout=30.0,
    )


plainlog = make("plainlog", durable=False)
plainlog_fixed = make("plainlog_fixed", durable=True)
