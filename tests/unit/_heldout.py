"""Small systems of the kinds seedbed is used on but nobody here wrote it for: a
two-phase commit over UDP, a job queue over UDP, a store with no checksums, a
one-connection client pool, plain async mains and an f(seed) target. Each has
one planted bug; the failure-report tests read what seedbed says about it."""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import seedbed
from seedbed import FaultProfile, NetworkConfig, Scenario, Simulation, fs

# -- two-phase commit over UDP: COMMIT is sent once, never retried --------------

PARTICIPANTS = ("p1", "p2", "p3")
ledger: dict[str, dict[str, str]] = {}


class _Participant(asyncio.DatagramProtocol):
    def __init__(self, name: str) -> None:
        self.name = name

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        kind, tx = data.decode().split()
        if kind == "PREPARE":
            ledger[self.name].setdefault(tx, "prepared")
            self.transport.sendto(f"YES {tx} {self.name}".encode(), addr)
        else:
            ledger[self.name][tx] = "committed"


def participant(name: str) -> Any:
    async def main() -> None:
        ledger.setdefault(name, {})
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(
            lambda: _Participant(name), local_addr=("0.0.0.0", 9000)
        )
        await asyncio.Event().wait()

    return main


class _Votes(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.votes: dict[str, set[str]] = {}

    def datagram_received(self, data: bytes, addr: Any) -> None:
        _, tx, who = data.decode().split()
        self.votes.setdefault(tx, set()).add(who)


async def coordinator() -> int:
    loop = asyncio.get_running_loop()
    transport, votes = await loop.create_datagram_endpoint(_Votes, local_addr=("0.0.0.0", 9100))
    committed = []
    for i in range(8):
        tx = f"tx{i}"
        while votes.votes.get(tx, set()) != set(PARTICIPANTS):  # prepare, retried
            for name in PARTICIPANTS:
                transport.sendto(f"PREPARE {tx}".encode(), (name, 9000))
            await asyncio.sleep(0.05)
        for name in PARTICIPANTS:  # the bug: COMMIT once, never retried
            transport.sendto(f"COMMIT {tx}".encode(), (name, 9000))
        committed.append(tx)
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    for tx in committed:
        for name in PARTICIPANTS:
            assert ledger[name].get(tx) == "committed", f"{tx} committed but not on {name}"
    return len(committed)


def two_phase_world(sim: Simulation) -> None:
    ledger.clear()
    for name in PARTICIPANTS:
        sim.host(name, participant(name))
    sim.client("coord", coordinator)


two_phase = Scenario("two_phase", two_phase_world, duration=10.0,
                     faults=FaultProfile(datagram_loss_probability=0.02))  # fmt: skip

# -- a job queue over UDP: a job whose ack is late is given to another worker ---

WORKERS = ("w1", "w2", "w3")
charges: dict[str, int] = {}


class _Worker(asyncio.DatagramProtocol):
    def __init__(self, name: str) -> None:
        self.name = name

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: Any) -> None:
        asyncio.get_running_loop().create_task(self.run(data.decode(), addr))

    async def run(self, job: str, addr: Any) -> None:
        await asyncio.sleep(0.05)
        charges[job] = charges.get(job, 0) + 1
        seedbed.always(charges[job] <= 1, "a job is charged at most once", job=job)
        self.transport.sendto(f"DONE {job}".encode(), addr)


def worker(name: str) -> Any:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: _Worker(name), local_addr=("0.0.0.0", 7000))
        await asyncio.Event().wait()

    return main


class _Done(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.done: set[str] = set()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.done.add(data.decode().split()[1])


async def dispatcher() -> int:
    loop = asyncio.get_running_loop()
    transport, acks = await loop.create_datagram_endpoint(_Done, local_addr=("0.0.0.0", 7100))
    for i in range(30):
        job, at = f"job{i}", i % 3
        for _ in range(4):
            transport.sendto(job.encode(), (WORKERS[at], 7000))
            for _ in range(10):
                await asyncio.sleep(0.05)
                if job in acks.done:
                    break
            if job in acks.done:
                break
            at = (at + 1) % 3  # the ack is late: give the job to the next worker
        await asyncio.sleep(0.1)
    return len(acks.done)


def job_queue_world(sim: Simulation) -> None:
    charges.clear()
    for name in WORKERS:
        sim.host(name, worker(name))
    sim.client("coord", dispatcher)


job_queue = Scenario("job_queue", job_queue_world, duration=20.0,
                     faults=FaultProfile(partition_per_second=0.3))  # fmt: skip

# -- a counter file with no checksum, read back after every write -------------


async def counter_store() -> None:
    count = 0
    while True:
        await fs.write_file("/count", json.dumps({"n": count}).encode(), durable=True)
        read = json.loads(await fs.read_file("/count"))["n"]  # a flipped bit breaks this
        assert read == count, f"read back {read}, wrote {count}"
        count += 1
        await asyncio.sleep(0.05)


async def idle_client() -> None:
    await asyncio.sleep(20.0)


def store_world(sim: Simulation) -> None:
    sim.host("db", counter_store)
    sim.client("c", idle_client)


unchecked_store = Scenario("unchecked_store", store_world, duration=20.0,
                           faults=FaultProfile(disk_corruption_per_second=0.1))  # fmt: skip

# -- a client whose one pooled connection survives a timeout ------------------


async def echo_server() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            writer.write(b"answer " + line)
            await writer.drain()

    server = await asyncio.start_server(handle, "0.0.0.0", 9000)
    await server.serve_forever()


async def pooled_client() -> None:
    reader, writer = await asyncio.open_connection("srv", 9000)
    timeouts = 0
    for i in range(40):
        writer.write(f"{i}\n".encode())
        try:
            line = await asyncio.wait_for(reader.readline(), 0.03)
        except TimeoutError:
            timeouts += 1  # the bug: the connection stays in the pool as it is
            continue
        got = int(line.split()[1])
        assert got == i, f"request {i} got the answer to {got} after {timeouts} timeouts"
        await asyncio.sleep(0.01)


def pool_world(sim: Simulation) -> None:
    sim.host("srv", echo_server)
    sim.client("c", pooled_client)


TAIL = NetworkConfig(latency_min=0.0005, latency_mean=0.001, latency_max=0.005,
                     latency_model="tail", latency_tail_probability=0.03,
                     latency_tail_min=0.02, latency_tail_max=0.25)  # fmt: skip
pooled = Scenario("pooled", pool_world, duration=10.0, network=TAIL)

# -- plain targets -------------------------------------------------------------


def _racy() -> Any:
    async def main() -> int:
        balance = {"a": 100}

        async def withdraw() -> None:
            seen = balance["a"]
            await asyncio.sleep(random.random() / 100)
            balance["a"] = seen - 10

        await asyncio.gather(*(withdraw() for _ in range(3)))
        assert balance["a"] == 70, f"balance is {balance['a']}, not 70"
        return balance["a"]

    return main


racy_main = _racy()  # a closure: not importable by its own name, only by this one


async def noisy_main() -> None:
    """Five handlers fail the same way at once; the run's report is the first."""

    async def handler(number: int) -> None:
        await asyncio.sleep(0.01)
        seedbed.always(number < 0, "handler numbers are negative", number=number)

    tasks = [asyncio.get_running_loop().create_task(handler(n)) for n in range(5)]
    await asyncio.sleep(1.0)
    del tasks


async def wall_clock_reader() -> None:
    for _ in range(100):
        time.time()
        await asyncio.sleep(0.1)


async def monotonic_only() -> None:
    for _ in range(100):
        time.monotonic()
        await asyncio.sleep(0.1)


def cut_build(seed: int) -> Any:
    """An f(seed) target: a test cuts the client's link mid-request."""
    sim = Simulation(seed)

    async def client() -> None:
        reader, writer = await asyncio.open_connection("srv", 9000)
        for i in range(5):
            writer.write(f"{i}\n".encode())
            await asyncio.wait_for(reader.readline(), 0.05)

    sim.host("srv", echo_server)
    sim.client("c1", client)
    sim.at(0.004, lambda: sim.partition("c1", "srv"))
    return sim.run(max_time=10.0)
