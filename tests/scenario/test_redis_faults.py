"""The world's faults reach the Redis stand-in and its clients as they would real Redis.

A partition makes a client's command time out and the next one work once
repaired; a crash under "no" tears the file's unsynced tail, and the
restart keeps the whole records before it and appends after them; buggify
disconnects a subscriber as Redis does one past its output buffer limit.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import seedbed

pytest.importorskip("fakeredis")
import redis.asyncio as aredis

from seedbed.services import Redis


def test_a_partition_times_a_command_out_and_a_repair_brings_it_back() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        r = aredis.Redis(host="redis", socket_timeout=1)
        await r.set("k", "1")
        sim.partition("app", "redis")
        with pytest.raises(aredis.TimeoutError):
            await r.get("k")
        sim.repair("app", "redis")
        r = aredis.Redis(host="redis", socket_timeout=1)
        return await r.get("k")

    sim = seedbed.Simulation(seed=0)
    sim.host("redis", Redis())
    sim.client("app", lambda: client(sim))
    assert sim.run(max_time=60).values["app"] == b"1"


def test_a_torn_tail_is_cut_at_restart_and_new_writes_follow_the_whole_records() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        r = aredis.Redis(host="redis")
        for i in range(50):
            await r.rpush("l", i)
        await asyncio.sleep(31)  # the kernel's writeback: the first 50 are on disk
        for i in range(50, 100):
            await r.rpush("l", i)  # written, never fsynced: torn by the crash
        sim.crash("redis")
        sim.restart("redis")
        await asyncio.sleep(0.1)
        r = aredis.Redis(host="redis")
        kept = await r.llen("l")
        await r.rpush("l", "after")
        sim.stop("redis")  # a kill: what was written stays
        sim.restart("redis")
        await asyncio.sleep(0.1)
        return kept, await aredis.Redis(host="redis").lrange("l", -1, -1)

    sim = seedbed.Simulation(seed=0, disk=seedbed.DiskConfig(torn_garbage_probability=0.5))
    sim.host("redis", Redis(appendfsync="no"))
    sim.client("app", lambda: client(sim))
    kept, last = sim.run(max_time=120).values["app"]
    assert 50 <= kept < 100
    assert last == [b"after"]


async def subscriber() -> str:
    """Publish 30 messages to itself; redis-py resubscribes after a disconnect, so a
    disconnect shows as messages that never arrived."""
    r, sub = aredis.Redis(host="redis"), aredis.Redis(host="redis").pubsub()
    await sub.subscribe("ch")
    await sub.get_message(timeout=1)
    received = 0
    for i in range(30):
        await r.publish("ch", i)
        try:
            message = await sub.get_message(timeout=1)
        except aredis.ConnectionError:
            message = None
        received += message is not None and message["type"] == "message"
    return "all delivered" if received == 30 else "some lost"


def test_buggify_disconnects_a_subscriber_losing_messages_in_some_seed_never_without_it() -> None:
    def scenario(buggify: bool) -> seedbed.Scenario:
        def setup(sim: seedbed.Simulation) -> None:
            sim.host("redis", Redis())
            sim.client("app", subscriber)

        faults = seedbed.FaultProfile(buggify=buggify)
        return seedbed.Scenario("pubsub", setup, faults=faults, duration=10.0)

    outcomes = {scenario(True).run(seed=seed).values["app"] for seed in range(12)}
    assert outcomes == {"some lost", "all delivered"}
    assert scenario(False).run(seed=0).values["app"] == "all delivered"


def test_a_failed_fsync_under_always_stops_redis_before_it_acknowledges(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        r = aredis.Redis(host="redis", socket_timeout=1)
        await r.set("k", "1")
        sim.degrade_disk("redis", fsync_error=1.0)
        with pytest.raises(aredis.ConnectionError):
            await r.set("k", "2")  # its fsync fails: no reply, Redis exits
        with pytest.raises(aredis.ConnectionError):
            await aredis.Redis(host="redis").ping()  # nobody listens now
        sim.restore_disk("redis")
        sim.crash("redis")
        sim.restart("redis")
        await asyncio.sleep(0.1)
        return await aredis.Redis(host="redis").get("k")

    sim = seedbed.Simulation(seed=0)
    sim.host("redis", Redis(appendfsync="always"))
    sim.client("app", lambda: client(sim))
    assert sim.run(max_time=60).values["app"] == b"1"  # the unacknowledged write is lost
    assert "fsyncing the append-only file /data/appendonly.aof" in caplog.text
