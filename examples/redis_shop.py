"""Two shops sell from one stock counter kept in Redis: a lost update, and its fix.

Each shop is a client node with an unmodified `redis.asyncio` client; Redis
is seedbed's stand-in (`seedbed.services.Redis`) on the node "redis". A
sale reads the stock and writes it back one lower. Done as GET then SET,
two shops that read the same stock both sell and one sale is lost; done
under WATCH/MULTI/EXEC, the second write is refused and retried:

    seedbed sweep examples.redis_shop:lost_update --seeds 40
    seedbed sweep examples.redis_shop:watched --seeds 100
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import redis.asyncio as redis

import seedbed
from seedbed.services import Redis

STOCK = 6
Sell = Callable[[redis.Redis], Awaitable[bool]]


async def sell_get_set(r: redis.Redis) -> bool:
    """Read, then write back one lower: another shop's sale in between is overwritten."""
    stock = int(await r.get("stock") or 0)
    if stock <= 0:
        return False
    await r.set("stock", stock - 1)
    return True


async def sell_watched(r: redis.Redis) -> bool:
    """The same under WATCH: EXEC fails if the stock changed since it was read; retry."""
    async with r.pipeline(transaction=True) as pipe:
        while True:
            try:
                await pipe.watch("stock")
                stock = int(await pipe.get("stock") or 0)
                if stock <= 0:
                    return False
                pipe.multi()
                pipe.set("stock", stock - 1)
                await pipe.execute()
                return True
            except redis.WatchError:
                continue  # another shop sold in between: read again


async def shop(sell: Sell, ledger: list[str], name: str) -> int:
    """Sell until the stock runs out; the last shop to finish audits the stock."""
    r = redis.Redis(host="redis", port=6379)
    await r.set("stock", STOCK, nx=True)  # whichever shop comes first stocks up
    sold = 0
    while True:
        await asyncio.sleep(random.uniform(0.0, 0.01))  # a customer arrives
        if not await sell(r):
            break
        sold += 1
        ledger.append(name)
    ledger.append(f"{name} done")
    if ledger.count("a done") + ledger.count("b done") == 2:
        stock = int(await r.get("stock") or 0)
        sales = len([entry for entry in ledger if not entry.endswith("done")])
        seedbed.always(
            stock == STOCK - sales, "every sale took one from the stock", stock=stock, sales=sales
        )
    await r.aclose()
    return sold


def world(sell: Sell) -> Callable[[seedbed.Simulation], None]:
    def setup(sim: seedbed.Simulation) -> None:
        ledger: list[str] = []  # the shops' receipts, shared by the test's oracle
        sim.host("redis", Redis())
        sim.client("a", lambda: shop(sell, ledger, "a"))
        sim.client("b", lambda: shop(sell, ledger, "b"))

    return setup


lost_update = seedbed.Scenario("lost_update", world(sell_get_set), duration=5.0)
watched = seedbed.Scenario("watched", world(sell_watched), duration=5.0)
