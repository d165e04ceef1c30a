"""What a crash of the Redis node keeps is what `appendfsync` promises.

A client INCRs one counter and remembers the last value Redis acknowledged;
the nemesis crashes and restarts the Redis node; when the run ends the
counter must be at least that value. Under "always" every acknowledged INCR
was fsynced before its reply, in every seed; under "everysec" a crash can
take back the last second, and under "no" (nothing fsynced for 30 s) all of
them, in some seed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import seedbed

pytest.importorskip("fakeredis")
import redis.asyncio as aredis

from seedbed.services import Redis

WORKLOAD = 4.0  # virtual seconds of INCRs


async def counter(results: list[tuple[int, int]]) -> Any:
    r = aredis.Redis(host="redis", port=6379, socket_timeout=2)
    acked = 0
    loop = asyncio.get_running_loop()
    while loop.time() < WORKLOAD:
        try:
            acked = max(acked, await r.incr("n"))
        except (aredis.ConnectionError, aredis.TimeoutError):
            await asyncio.sleep(0.3)  # Redis is down: retry
        await asyncio.sleep(0.1)
    while True:  # the final read, once Redis is back
        try:
            final = int(await r.get("n") or 0)
            break
        except (aredis.ConnectionError, aredis.TimeoutError):
            await asyncio.sleep(0.5)
    await r.aclose()
    seedbed.always(final >= acked, "an acknowledged INCR survives", acked=acked, final=final)
    results.append((acked, final))


def scenario(appendfsync: str, results: list[tuple[int, int]]) -> seedbed.Scenario:
    """Crashes of the Redis node while the client INCRs; then (faults over, the node
    restarted) the client's final read must see every acknowledged INCR."""

    def setup(sim: seedbed.Simulation) -> None:
        sim.host("redis", Redis(appendfsync=appendfsync))
        sim.client("app", lambda: counter(results))

    faults = seedbed.FaultProfile(crash_per_second=0.75, downtime_mean=0.5, max_down=1)
    return seedbed.Scenario(
        f"incr_{appendfsync}", setup, faults=faults, duration=WORKLOAD,
        liveness=[lambda: bool(results)], liveness_timeout=10.0,
    )  # fmt: skip


def test_acknowledged_incrs_survive_crashes_in_60_seeds_with_appendfsync_always() -> None:
    crashes = 0
    for seed in range(60):
        results: list[tuple[int, int]] = []
        result = scenario("always", results).run(seed=seed)
        crashes += result.faults["crash"]["effective"]
        [(acked, final)] = results
        assert final >= acked > 0
    assert crashes >= 60  # the pressure was there: about two crashes a seed


@pytest.mark.parametrize("appendfsync", ["everysec", "no"])
def test_a_crash_takes_acknowledged_incrs_back_in_some_seed_unless_always(
    appendfsync: str,
) -> None:
    for seed in range(20):
        try:
            scenario(appendfsync, []).run(seed=seed)
        except seedbed.InvariantViolation as exc:
            assert "an acknowledged INCR survives" in str(exc)
            return
    pytest.fail(f"no seed of 20 lost an acknowledged INCR under appendfsync={appendfsync!r}")
