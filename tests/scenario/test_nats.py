"""The NATS stand-in serves unmodified `nats-py` clients: subjects, queue groups, requests.

Workers on two nodes share a queue group; each request goes to one of them,
the one the seed chooses, so which worker answers differs between seeds and
is the same for one seed. Wildcards, "no responders" and a crash of the
broker (clients reconnect and resubscribe, messages in flight are lost)
behave as with nats-server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import seedbed
from seedbed.services import Nats

nats = pytest.importorskip("nats")


async def worker(name: str) -> None:
    nc = await nats.connect("nats://nats:4222")

    async def handle(msg: Any) -> None:
        await msg.respond(f"{name}:{msg.data.decode()}".encode())

    await nc.subscribe("jobs.*", queue="workers", cb=handle)
    await asyncio.sleep(3600)


async def requests() -> list[str]:
    await asyncio.sleep(0.5)  # the workers have subscribed
    nc = await nats.connect("nats://nats:4222")
    answers = [
        (await nc.request(f"jobs.{i}", b"%d" % i, timeout=2)).data.decode() for i in range(8)
    ]
    await nc.close()
    return answers


def queue_world(seed: int) -> list[str]:
    sim = seedbed.Simulation(seed=seed)
    sim.host("nats", Nats())
    sim.host("w1", lambda: worker("w1"))
    sim.host("w2", lambda: worker("w2"))
    sim.client("app", requests)
    return sim.run(max_time=60).values["app"]


@pytest.mark.filterwarnings("ignore::seedbed.SeedbedWarning")  # nats-py swallows cancellations
def test_each_request_goes_to_one_queue_member_the_seed_chooses() -> None:
    runs = [queue_world(seed) for seed in range(3)]
    for answers in runs:
        assert [a.split(":")[1] for a in answers] == [str(i) for i in range(8)]
        assert {a.split(":")[0] for a in answers} <= {"w1", "w2"}
    assert len({tuple(answers) for answers in runs}) > 1  # the choice is the seed's
    assert queue_world(1) == runs[1]  # and the same for one seed


@pytest.mark.filterwarnings("ignore::seedbed.SeedbedWarning")
def test_wildcards_fan_out_and_a_request_nobody_serves_gets_no_responders() -> None:
    async def client() -> Any:
        nc = await nats.connect("nats://nats:4222")
        deep, one = await nc.subscribe("orders.>"), await nc.subscribe("orders.*")
        await nc.publish("orders.eu.paid", b"1")
        await nc.publish("orders.us", b"2")
        got_deep = [(await deep.next_msg(timeout=1)).subject for _ in range(2)]
        got_one = (await one.next_msg(timeout=1)).subject
        with pytest.raises(nats.errors.NoRespondersError):
            await nc.request("nobody.home", b"?", timeout=1)
        await nc.close()
        return got_deep, got_one

    sim = seedbed.Simulation(seed=0)
    sim.host("nats", Nats())
    sim.client("app", client)
    assert sim.run(max_time=60).values["app"] == (["orders.eu.paid", "orders.us"], "orders.us")


@pytest.mark.filterwarnings("ignore::seedbed.SeedbedWarning")
def test_after_a_broker_crash_clients_reconnect_and_resubscribe() -> None:
    async def client(sim: seedbed.Simulation) -> Any:
        nc = await nats.connect("nats://nats:4222", reconnect_time_wait=0.5)
        sub = await nc.subscribe("news")
        await nc.publish("news", b"before")
        before = (await sub.next_msg(timeout=1)).data
        sim.crash("nats")
        await asyncio.sleep(0.2)
        sim.restart("nats")
        await asyncio.sleep(3)  # the client reconnects and sends its SUB again
        await nc.publish("news", b"after")
        after = (await sub.next_msg(timeout=2)).data
        await nc.close()
        return before, after

    sim = seedbed.Simulation(seed=0)
    sim.host("nats", Nats())
    sim.client("app", lambda: client(sim))
    assert sim.run(max_time=60).values["app"] == (b"before", b"after")
