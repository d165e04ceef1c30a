"""A vote reply sent before its fsync: Raft's RequestVote on three voters.

Each voter keeps Raft's `currentTerm` and `votedFor` in one small metadata
file, replaced atomically (write a temporary file, fsync it, rename it over
the old one, fsync the directory). Two candidates campaign in every term
and retry a voter they cannot reach until
the next term begins. The buggy voter answers "granted"
first and persists its vote after, to keep the reply fast: a crash in
between (the millisecond of the fsync) and the restarted voter has no
record of its vote, so it grants the other candidate the same term. The
correct voter persists, then answers. The scenario crashes voters at drawn
operations (`operation_crash`: just before or after a drawn fsync, write,
rename, send, receive or connect), which is where such windows are.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from tests.quality.planted._defaults import options, run_scenario
from tests.quality.planted._net import until_hang_up

from seedbed import DiskConfig, FaultProfile, Scenario, Simulation, fs

PORT = 7400
VOTERS = ("v1", "v2", "v3")
CANDIDATES = ("a", "b")
TERMS = 8
PERIOD = 1.0  # a new term every PERIOD seconds: a candidate tries its voters until then
ATTEMPT = 0.05  # seconds a candidate waits for one reply
SSD = DiskConfig(latency_min=0.0002, latency_max=0.002)  # each write, fsync, rename


class Voter:
    """One voter's persistent state and its RequestVote handler."""

    def __init__(self, reply_first: bool) -> None:
        self.reply_first = reply_first
        self.term = 0
        self.voted_for = ""
        self.lock = asyncio.Lock()

    async def load(self) -> None:
        if await fs.exists("/meta"):
            term, _, voted_for = (await fs.read_file("/meta")).decode().partition(" ")
            self.term, self.voted_for = int(term), voted_for

    async def persist(self) -> None:
        async with await fs.open("/meta.tmp", "w") as file:
            await file.write(f"{self.term} {self.voted_for}".encode())
            await file.fsync()
        await fs.rename("/meta.tmp", "/meta")
        await fs.fsync_dir("/")

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        if line:
            term, candidate = int(line.split()[1]), line.split()[2].decode()
            async with self.lock:  # one vote decided at a time
                await self.decide(term, candidate, writer)

    async def decide(self, term: int, candidate: str, writer: asyncio.StreamWriter) -> None:
        if term > self.term:
            self.term, self.voted_for = term, ""
        granted = term == self.term and self.voted_for in ("", candidate)
        if granted:
            self.voted_for = candidate
        answer = f"{'granted' if granted else 'denied'} {self.term}\n".encode()
        if self.reply_first:
            writer.write(answer)  # answer at once, persist in the background of the reply
            await self.persist()
        else:
            await self.persist()
            writer.write(answer)
        await writer.drain()

    async def serve(self) -> None:
        await self.load()
        server = await asyncio.start_server(until_hang_up(self.handle), "0.0.0.0", PORT)
        await server.serve_forever()


def voter(reply_first: bool) -> Any:
    async def main() -> None:  # each incarnation starts from its disk alone
        await Voter(reply_first).serve()

    return main


async def ask(voter: str, term: int, candidate: str, deadline: float) -> bool:
    """RequestVote to one voter, retried until it answers or the deadline passes."""
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        writer = None
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(voter, PORT), ATTEMPT)
            writer.write(f"vote {term} {candidate}\n".encode())
            answer = await asyncio.wait_for(reader.readline(), ATTEMPT)
            if answer:
                return answer.startswith(b"granted")
        except (TimeoutError, ConnectionError):
            pass
        finally:
            if writer is not None:
                writer.close()
        await asyncio.sleep(0.02)
    return False


def candidate(name: str, ballots: dict[tuple[int, str], set[str]]) -> Any:
    """A candidate that campaigns in every term and abandons a term when the next begins."""

    async def canvass(voter: str, term: int) -> None:
        deadline = asyncio.get_running_loop().time() + PERIOD
        if await ask(voter, term, name, deadline):
            ballots[(term, voter)].add(name)

    async def main() -> None:
        for term in range(1, TERMS + 1):
            campaign = [asyncio.create_task(canvass(voter, term)) for voter in VOTERS]
            await asyncio.sleep(PERIOD)
            for task in campaign:
                task.cancel()  # a new term: the old one's votes no longer matter

    return main


def scenario(buggy: bool) -> Scenario:
    ballots: dict[tuple[int, str], set[str]] = defaultdict(set)

    def setup(sim: Simulation) -> None:
        ballots.clear()
        for name in VOTERS:
            sim.host(name, voter(reply_first=buggy))
        for name in CANDIDATES:
            sim.client(name, candidate(name, ballots))

    def one_vote_per_term() -> bool:
        return all(len(granted) <= 1 for granted in ballots.values())

    faults = FaultProfile(operation_crash_per_second=2.0, fault_duration_mean=1.0)
    name = "vote_" + ("buggy" if buggy else "correct")
    return Scenario(name, setup, faults=faults, duration=TERMS * PERIOD + 1.0,
                    invariants=[one_vote_per_term], disk=SSD, **options())  # fmt: skip


def run(seed: int, buggy: bool) -> str | None:
    return run_scenario(scenario(buggy), seed)
