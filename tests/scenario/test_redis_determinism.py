"""A world with the Redis stand-in is a function of its seed, across processes.

The stand-in's choices (service times, buggify, fakeredis's own `random`
calls, which blocked client or subscriber is served first) all come from the
seed, so two processes with different string hashing agree on the trace
hash of a run with crashes, WATCH retries, pub/sub, a blocking pop and a
replica, and of a NATS queue group serving requests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fakeredis")
pytest.importorskip("nats")

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """
import asyncio, sys
import nats
import redis.asyncio as aredis
import seedbed
from seedbed.services import Nats, Redis
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

async def worker():
    nc = await nats.connect("nats://nats:4222")
    async def handle(msg):
        await msg.respond(msg.data)
    await nc.subscribe("jobs.*", queue="workers", cb=handle)
    await asyncio.sleep(3600)

async def requester():
    await asyncio.sleep(0.5)
    nc = await nats.connect("nats://nats:4222")
    for i in range(5):
        await nc.request(f"jobs.{i}", b"x", timeout=2)
    await nc.close()

def brokered(seed):
    sim = seedbed.Simulation(seed=seed)
    sim.host("nats", Nats())
    sim.host("w1", worker)
    sim.host("w2", worker)
    sim.client("app", requester)
    return sim.run(max_time=60).trace_hash

print(redis_shop.watched.run(seed=11).trace_hash, brokered(11))
print(faulty.run(seed=11).trace_hash)
print(faulty.run(seed=12).trace_hash)
"""


def start(hashseed: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", PROGRAM],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip


def hashes(process: subprocess.Popen[str]) -> list[str]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-2000:]
    return out.splitlines()


def test_one_seed_gives_one_trace_hash_in_two_processes_and_two_seeds_two() -> None:
    processes = [start("1"), start("2")]  # side by side: one per core
    first, second = (hashes(process) for process in processes)
    assert first == second
    assert first[1] != first[2]  # and another seed, another run
