"""The Redis stand-in serves unmodified `redis.asyncio` clients the commands services use.

Each test runs a world with one `Redis()` host and one client node that
talks to `redis:6379` over the simulated network, and checks what real
Redis answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import seedbed

pytest.importorskip("fakeredis")
import redis.asyncio as aredis

from seedbed.services import Redis


def serve(client: Callable[[], Awaitable[Any]], *, seed: int = 0, **options: Any) -> Any:
    sim = seedbed.Simulation(seed=seed)
    sim.host("redis", Redis(**options))
    sim.client("app", client)
    return sim.run(max_time=120).values["app"]


def connect(**kwargs: Any) -> aredis.Redis:
    return aredis.Redis(host="redis", port=6379, **kwargs)


def test_strings_counters_and_expiry_on_the_nodes_virtual_clock() -> None:
    async def client() -> Any:
        r = connect()
        await r.set("k", "v", ex=10)
        got = await r.get("k"), await r.ttl("k")
        counts = await r.incr("n"), await r.incrby("n", 5), await r.decr("n")
        await asyncio.sleep(11)  # virtual seconds
        gone = await r.get("k")
        await r.aclose()
        return got, counts, gone

    assert serve(client) == ((b"v", 10), (1, 6, 5), None)


def test_hashes_lists_sets_and_sorted_sets() -> None:
    async def client() -> Any:
        r = connect(decode_responses=True)
        await r.hset("h", mapping={"a": "1", "b": "2"})
        await r.rpush("l", "x", "y", "z")
        await r.sadd("s", "p", "q")
        await r.zadd("z", {"low": 1.0, "high": 2.5})
        out = (
            await r.hgetall("h"),
            await r.lrange("l", 0, -1),
            sorted(await r.smembers("s")),
            await r.zrange("z", 0, -1, withscores=True),
            await r.lpop("l"),
        )
        await r.aclose()
        return out

    assert serve(client) == (
        {"a": "1", "b": "2"}, ["x", "y", "z"], ["p", "q"], [("low", 1.0), ("high", 2.5)], "x",
    )  # fmt: skip


def test_a_blocking_pop_waits_for_another_clients_push() -> None:
    async def client() -> Any:
        waiter, pusher = connect(), connect()
        pop = asyncio.create_task(waiter.blpop(["jobs"], timeout=30))
        await asyncio.sleep(2)
        assert not pop.done()
        await pusher.rpush("jobs", "job-1")
        got = await pop
        timed_out = await waiter.blpop(["jobs"], timeout=1)
        await waiter.aclose()
        await pusher.aclose()
        return got, timed_out

    assert serve(client) == ((b"jobs", b"job-1"), None)


def test_a_client_that_leaves_while_blocked_takes_nothing_from_the_list(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def client() -> Any:
        waiter = connect()
        pop = asyncio.create_task(waiter.blpop(["jobs"], timeout=0))
        await asyncio.sleep(1)
        pop.cancel()
        await waiter.aclose()  # gone while blocked
        await asyncio.sleep(1)
        r = connect()
        await r.rpush("jobs", "job-1")
        await asyncio.sleep(1)
        return await r.lrange("jobs", 0, -1)

    assert serve(client) == [b"job-1"]
    assert "never retrieved" not in caplog.text  # its blocked command was unwound cleanly


def test_watch_multi_exec_aborts_when_the_key_changed() -> None:
    async def client() -> Any:
        r, other = connect(), connect()
        await r.set("stock", 10)
        async with r.pipeline(transaction=True) as pipe:
            await pipe.watch("stock")
            await other.decr("stock")  # another client's write between WATCH and EXEC
            pipe.multi()
            pipe.set("stock", 9)
            try:
                await pipe.execute()
                aborted = False
            except aredis.WatchError:
                aborted = True
        value = await r.get("stock")
        await r.aclose()
        await other.aclose()
        return aborted, value

    assert serve(client) == (True, b"9")


def test_pub_sub_delivers_to_every_subscriber() -> None:
    async def client() -> Any:
        r = connect()
        subs = [connect().pubsub() for _ in range(2)]
        for sub in subs:
            await sub.subscribe("news")
            assert (await sub.get_message(timeout=1))["type"] == "subscribe"
        receivers = await r.publish("news", "hello")
        got = [await sub.get_message(timeout=1) for sub in subs]
        for sub in subs:
            await sub.aclose()
        await r.aclose()
        return receivers, [m["data"] for m in got]

    assert serve(client) == (2, [b"hello", b"hello"])


def test_lua_scripts_run_atomically() -> None:
    async def client() -> Any:
        r = connect()
        script = "local v = redis.call('INCRBY', KEYS[1], ARGV[1]) return v * 2"
        out = await r.eval(script, 1, "n", 3), await r.get("n")
        await r.aclose()
        return out

    assert serve(client) == (6, b"3")


def test_resp3_clients_get_maps_and_nulls_in_their_protocol() -> None:
    async def client() -> Any:
        r = connect(protocol=3)
        await r.hset("h", "f", "v")
        out = await r.hgetall("h"), await r.get("missing"), await r.ping()
        await r.aclose()
        return out

    assert serve(client) == ({b"f": b"v"}, None, True)


def test_errors_reach_the_client_as_redis_words_them() -> None:
    async def client() -> Any:
        r = connect()
        await r.set("s", "text")
        try:
            await r.lpush("s", "x")
        except aredis.ResponseError as exc:
            message = str(exc)
        await r.aclose()
        return message

    assert serve(client).startswith("WRONGTYPE Operation against a key holding the wrong kind")


def test_the_synchronous_client_is_refused_inside_a_node_not_run_on_real_sockets() -> None:
    import redis as sync_redis

    async def client() -> Any:
        return sync_redis.Redis(host="redis").set("k", "v")

    with pytest.raises(seedbed.SimulationEscape, match="getaddrinfo"):
        serve(client)


def test_spop_draws_from_the_stand_ins_own_stream_not_the_programs() -> None:
    """A random member is the seed's choice, and drawing it does not shift what the
    program's own `random` returns afterwards."""
    import random

    def popped_and_own_draw(seed: int, pop: bool) -> Any:
        async def client() -> Any:
            r = connect()
            await r.sadd("s", *range(20))
            popped = await r.spop("s", 3) if pop else None
            return popped, random.random()

        return serve(client, seed=seed)

    first, second = popped_and_own_draw(5, True), popped_and_own_draw(6, True)
    assert first == popped_and_own_draw(5, True)
    assert first[0] != second[0]
    assert first[1] == popped_and_own_draw(5, False)[1]
