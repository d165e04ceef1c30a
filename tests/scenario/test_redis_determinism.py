"""A world with the Redis stand-in is a function of its seed, across processes.

The stand-in's choices (service times, buggify, fakeredis's own `random`
calls, which blocked client or subscriber is served first) all come from the
seed, so two processes with different string hashing agree on the trace
hash of a run with crashes, WATCH retries, pub/sub, a blocking pop and a
replica.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fakeredis")

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import asyncio, sys
import redis.asyncio as aredis
import seedbed
from seedbed.services import Redis
from examples import redis_shop

async def busy():
    r, sub = aredis.Redis(host="redis"), aredis.Redis(host="redis").pubsub()
    await sub.subscribe("ch")
    pop = asyncio.create_task(aredis.Redis(host="redis").blpop(["q"], timeout=5))
    for i in range(20):
        try:
            await r.publish("ch", i)
            await r.rpush("q", i)
            await r.spop("s")
            await r.sadd("s", *range(i, i + 5))
        except (aredis.ConnectionError, aredis.TimeoutError):
            await asyncio.sleep(0.5)
        await asyncio.sleep(0.05)
    return None

def world(sim):
    sim.host("redis", Redis(appendfsync="everysec", latency_max=0.002))
    sim.host("replica", Redis(replicaof="redis"))
    sim.client("app", busy)

faulty = seedbed.Scenario("faulty", world, faults="swarm", duration=3.0)
for seed in (11, 12):
    print(redis_shop.watched.run(seed=seed).trace_hash, faulty.run(seed=seed).trace_hash)
"""


def hashes(hashseed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT,
    )  # fmt: skip
    return out.stdout.splitlines()


def test_one_seed_gives_one_trace_hash_in_two_processes_and_two_seeds_two() -> None:
    first, second = hashes("1"), hashes("2")
    assert first == second
    assert first[0] != first[1]
