"""Partitions that say what they do (issue 11, item 7).

`isolate` and `random_halves` are patterns over the hosts (or a given set):
a new one replaces the last unless asked to add; links cut by name stay cut;
`sim.cuts()` tells which links drop traffic. An address no node has is
outside the world: connects to it time out, as on a host with no route out.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

import seedbed
from seedbed import NetworkConfig, UsageError

HOSTS = ["n1", "n2", "n3", "n4", "n5"]


async def _idle() -> None:
    await asyncio.Event().wait()


def _world(seed: int = 1) -> seedbed.Simulation:
    sim = seedbed.Simulation(seed=seed)
    for name in HOSTS:
        sim.host(name, _idle)
    sim.client("c1", _idle)
    return sim


def _both_ways(first: list[str], second: list[str]) -> set[tuple[str, str]]:
    return {(a, b) for a in first for b in second} | {(b, a) for a in first for b in second}


def test_a_new_pattern_replaces_the_last() -> None:
    for seed in range(8):
        sim = _world(seed)
        sim.isolate("n1")
        assert set(sim.cuts()) == _both_ways(["n1"], ["n2", "n3", "n4", "n5"])
        first, second = sim.random_halves()
        # n1 is cut from the other half only, not from its own half any more
        assert set(sim.cuts()) == _both_ways(first, second)


def test_a_pattern_added_to_the_last_keeps_both() -> None:
    sim = _world(3)
    sim.isolate("n1")
    first, second = sim.random_halves(add=True)
    expected = _both_ways(["n1"], ["n2", "n3", "n4", "n5"]) | _both_ways(first, second)
    assert set(sim.cuts()) == expected


def test_patterns_act_on_hosts_by_default_so_clients_reach_every_host() -> None:
    for seed in range(8):
        sim = _world(seed)
        first, second = sim.random_halves()
        assert sorted(first + second) == HOSTS
        sim.isolate("n2", add=True)
        assert all("c1" not in link for link in sim.cuts())


def test_patterns_act_on_a_given_set() -> None:
    sim = _world(2)
    first, second = sim.random_halves(among=["n1", "n2", "c1"])
    assert sorted(first + second) == ["c1", "n1", "n2"]
    assert set(sim.cuts()) == _both_ways(first, second)
    sim.isolate("n3", among=["n3", "n4"])
    assert set(sim.cuts()) == _both_ways(["n3"], ["n4"])
    with pytest.raises(UsageError, match="unknown node"):
        sim.random_halves(among=["n1", "nope"])


def test_a_link_cut_by_name_survives_a_new_pattern_and_heal_opens_all() -> None:
    sim = _world(4)
    sim.partition("n1", "c1", one_way=True)
    sim.isolate("n1")
    sim.isolate("n2")  # replaces the first pattern
    assert ("n1", "c1") in sim.cuts()
    assert set(sim.cuts()) == {("n1", "c1")} | _both_ways(["n2"], ["n1", "n3", "n4", "n5"])
    sim.heal()
    assert sim.cuts() == []


def test_a_pattern_takes_effect_on_traffic() -> None:
    async def server() -> None:
        await asyncio.start_server(lambda r, w: None, port=7000)
        await asyncio.Event().wait()

    async def client() -> list[str]:
        outcomes = []
        for host in HOSTS[:3]:
            try:
                _, writer = await asyncio.open_connection(host, 7000)
                writer.close()
                outcomes.append("ok")
            except OSError as exc:
                outcomes.append(type(exc).__name__)
        return outcomes

    sim = seedbed.Simulation(seed=1, network=NetworkConfig(connect_timeout=1.0))
    for name in HOSTS[:3]:
        sim.host(name, server)
    sim.client("c1", client)
    sim.isolate("n1", among=["n1", "c1"])
    sim.isolate("n2", among=["n2", "c1"])  # replaces: n1 reachable again
    assert sim.run(max_time=30).values["c1"] == ["ok", "TimeoutError", "ok"]


def test_a_connect_to_an_address_outside_the_world_times_out() -> None:
    async def client() -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo("8.8.8.8", 53, type=socket.SOCK_STREAM)
        started = loop.time()
        try:
            await asyncio.open_connection("8.8.8.8", 53)
        except OSError as exc:
            error = exc
        waited = loop.time() - started
        transport, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("8.8.8.8", 53)
        )
        transport.sendto(b"query")  # vanishes, as on a network with no route out
        transport.close()
        try:
            await loop.getaddrinfo("no-such-host.invalid", 80)
        except socket.gaierror as exc:
            unknown_name = exc
        return infos[0][4], type(error), str(error), waited, type(unknown_name)

    sim = seedbed.Simulation(seed=1, network=NetworkConfig(connect_timeout=5.0))
    sim.client("c1", client)
    address, kind, message, waited, name_error = sim.run(max_time=60).values["c1"]
    assert address == ("8.8.8.8", 53)
    assert kind is TimeoutError and "8.8.8.8:53" in message
    assert waited == pytest.approx(5.0, abs=0.01)
    assert name_error is socket.gaierror
