"""A one-node ledger with a planted bug, for the shrinking tests.

A writer appends numbered records to a log file and tells its client each is
stored (`acked`) *before* the record's fsync completes: the planted bug. A
crash during that fsync loses a record the client was told is stored; the
restarted writer finds it missing and the run fails. The window is the
fsync's latency out of each round, so under random crashes a run usually
fails only after several harmless crashes, seconds in: there is much to
shrink, down to one crash, early.

`ledger_audited` checks only at the end of the run, like a history checker:
one claim that reports two different problems, too few records (a run cut
short) or records lost, so a shrinker must keep the one it was shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import seedbed
from seedbed import DiskConfig, FaultProfile, Scenario, Simulation, fs

acked: list[int] = []  # what the client was told is stored (outside the node: kept on a crash)
lost: set[int] = set()  # acknowledged records a restarted writer did not find
checking = [True]  # whether the writer checks at each start (else only the audit does)


async def writer() -> None:
    found = await _load()
    lost.update(set(acked) - set(found))
    if checking[0]:
        seedbed.always(not lost, "acknowledged records survive a crash", lost=len(lost))
    number = max(found, default=-1) + 1
    if not await fs.exists("/log"):
        await fs.write_file("/log", b"", durable=True)
        await fs.fsync_dir("/")
    async with await fs.open("/log", "a") as log:
        while True:
            await log.write(f"{number}\n".encode())
            acked.append(number)  # the bug: acknowledged before the fsync below
            await log.fsync()
            number += 1
            await asyncio.sleep(0.05)


async def _load() -> list[int]:
    if not await fs.exists("/log"):
        return []
    text = (await fs.read_file("/log")).decode(errors="replace")  # a torn tail is skipped
    return [int(line) for line in text.splitlines() if line.strip().isdigit()]


def world(check_at_start: bool) -> Callable[[Simulation], None]:
    def setup(sim: Simulation) -> None:
        acked.clear()
        lost.clear()
        checking[0] = check_at_start
        sim.host("writer", writer)

    return setup


def audited() -> bool:
    """At the end: enough records written, none lost (one claim, two problems)."""
    problems = []
    if len(acked) < 20:
        problems.append(f"only {len(acked)} records written (at least 20)")
    if lost:
        problems.append(f"records lost: {sorted(lost)[:5]}")
    seedbed.always(not problems, "the ledger checks out", problems="; ".join(problems))
    return True


FAULTS = FaultProfile(crash_per_second=0.3, downtime_mean=0.2, max_down=1)
DISK = DiskConfig(latency_min=0.005, latency_max=0.02)

ledger = Scenario("ledger", world(True), faults=FAULTS, duration=60.0, disk=DISK)
ledger_audited = Scenario(
    "ledger_audited", world(False), faults=FAULTS, duration=60.0, liveness=[audited], disk=DISK
)
