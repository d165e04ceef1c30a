"""A planted lost update in a service that uses Redis is found; its WATCH fix passes.

Two shops (client nodes with unmodified `redis.asyncio` clients) sell from
one stock counter on seedbed's Redis stand-in (`examples/redis_shop.py`).
Selling with GET then SET loses a sale in some seed of 40; with
WATCH/MULTI/EXEC it passes 100 seeds.
"""

from __future__ import annotations

import pytest

import seedbed

pytest.importorskip("fakeredis")
from examples import redis_shop


def test_get_then_set_loses_a_sale_in_some_seed_of_40() -> None:
    for seed in range(40):
        try:
            redis_shop.lost_update.run(seed=seed)
        except seedbed.InvariantViolation as exc:
            assert "every sale took one from the stock" in str(exc)
            return
    pytest.fail("no seed of 40 lost a sale with GET then SET")


def test_watch_multi_exec_passes_100_seeds() -> None:
    sold = set()
    for seed in range(100):
        result = redis_shop.watched.run(seed=seed)
        assert sum(result.values.values()) == redis_shop.STOCK
        sold.add(result.values["a"])
    assert len(sold) > 1  # the shops' shares differ from seed to seed: they did race
