"""A restarted Redis node replays its append-only file: what it keeps, what it refuses.

The file holds each command's effect on the keys it changed (the whole new
value, and an expiry as an absolute time), so a restart rebuilds every type
the file can hold; without the file (`appendonly=False`) a restart starts
empty, and with it the command families the file cannot hold are refused
rather than lost at the next crash.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

import seedbed

pytest.importorskip("fakeredis")
import redis.asyncio as aredis

from seedbed.services import Redis


def crash_and_restart(sim: seedbed.Simulation) -> None:
    assert sim.crash("redis")
    assert sim.restart("redis")


def run(client: Any, **options: Any) -> Any:
    sim = seedbed.Simulation(seed=3)
    sim.host("redis", Redis(**options))
    sim.client("app", lambda: client(sim))
    return sim.run(max_time=3600).values["app"]


async def write_everything(r: aredis.Redis) -> None:
    await r.set("s", "v")
    await r.set("soon", "gone", ex=100)
    await r.incrby("n", 41)
    await r.incr("n")
    await r.rpush("l", "a", "b", "c")
    await r.lpop("l")
    await r.hset("h", mapping={"f": "1", "g": "2"})
    await r.hdel("h", "g")
    await r.sadd("set", "x", "y")
    await r.zadd("z", {"m": 1.5, "n": -2})
    await r.eval("redis.call('SET', 'scripted', ARGV[1])", 0, "lua")
    async with r.pipeline(transaction=True) as pipe:
        pipe.set("t1", "1").set("t2", "2")
        await pipe.execute()
    await r.delete("t1")


async def read_everything(r: aredis.Redis) -> Any:
    return (
        await r.get("s"), await r.get("n"), await r.lrange("l", 0, -1), await r.hgetall("h"),
        sorted(await r.smembers("set")), await r.zrange("z", 0, -1, withscores=True),
        await r.get("scripted"), await r.get("t1"), await r.get("t2"), await r.ttl("soon"),
    )  # fmt: skip


EVERYTHING = (
    b"v", b"42", [b"b", b"c"], {b"f": b"1"}, [b"x", b"y"], [(b"n", -2.0), (b"m", 1.5)],
    b"lua", None, b"2",
)  # fmt: skip


def test_every_type_survives_a_crash_under_appendfsync_always() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        r = aredis.Redis(host="redis")
        await write_everything(r)
        await asyncio.sleep(10)
        crash_and_restart(sim)
        await asyncio.sleep(0.1)
        r = aredis.Redis(host="redis")
        return await read_everything(r)

    *values, ttl = run(client, appendfsync="always")
    assert tuple(values) == EVERYTHING
    assert ttl == 90  # the expiry is an absolute time: it ran on while the node was down


def test_an_expiry_that_passed_while_the_node_was_down_has_expired() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        r = aredis.Redis(host="redis")
        await r.set("k", "v", px=500)
        sim.crash("redis")
        await asyncio.sleep(1)
        sim.restart("redis")
        await asyncio.sleep(0.1)
        return await aredis.Redis(host="redis").get("k")

    assert run(client, appendfsync="always") is None


def test_without_the_file_a_restart_starts_empty() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        await aredis.Redis(host="redis").set("k", "v")
        crash_and_restart(sim)
        await asyncio.sleep(0.1)
        return await aredis.Redis(host="redis").dbsize()

    assert run(client, appendonly=False) == 0


def test_without_the_file_save_is_refused_rather_than_a_snapshot_pretended() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        with pytest.raises(aredis.ResponseError, match="no RDB snapshot"):
            await aredis.Redis(host="redis").save()
        return True

    assert run(client, appendonly=False) is True


def test_a_command_the_file_cannot_hold_is_refused_not_lost() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        r = aredis.Redis(host="redis")
        with pytest.raises(aredis.ResponseError, match="appendonly=False"):
            await r.xadd("stream", {"f": "v"})
        return await r.ping()

    assert run(client) is True


def test_a_stop_keeps_what_was_written_under_appendfsync_no() -> None:
    """`sim.stop` is a process kill on a machine that stays up: the kernel keeps
    what Redis wrote, fsynced or not, as for a real `kill -9`."""

    async def client(sim: seedbed.Simulation) -> Any:
        await aredis.Redis(host="redis").set("k", "v")
        await asyncio.sleep(0.1)
        assert sim.stop("redis")
        assert sim.restart("redis")
        await asyncio.sleep(0.1)
        return await aredis.Redis(host="redis").get("k")

    assert run(client, appendfsync="no") == b"v"


def test_outside_a_simulated_node_the_stand_in_refuses_to_run() -> None:
    with pytest.raises(seedbed.UsageError, match="node main"):
        seedbed.run(Redis(), seed=0)


def test_without_fakeredis_it_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['fakeredis'] = None\n"
        "import seedbed\n"
        "from seedbed.services import Redis\n"
        "try:\n    Redis()\nexcept seedbed.UsageError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'seedbed[services]'" in out.stdout
