"""The heavy-tailed latency model (`NetworkConfig(latency_model="tail")`): its
distribution, per-link asymmetry, stream order, and the same draws everywhere."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from seedbed import Simulation, UsageError
from seedbed._core import Entropy, Trace
from seedbed.net import NetworkConfig
from seedbed.net._links import Links
from seedbed.scenario._scenario import _swarm_network, tail_config


def _hops(
    config: NetworkConfig, n: int, seed: int = 0, link: tuple[str, str] = ("a", "b")
) -> list[int]:
    trace = Trace()
    links = Links(Entropy(seed, trace).stream("net"), trace, config, lambda: ["a", "b"])
    one = links.get(*link)
    return [links.latency_ns(one) for _ in range(n)]


def _quantile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * len(ordered))] / 1e9


def test_the_default_model_has_a_heavy_tail_and_the_exponential_one_never_spikes() -> None:
    config = NetworkConfig()
    assert config.latency_model == "tail"
    hops = [hop for seed in range(10) for hop in _hops(config, 5000, seed)]
    assert 0.0005 <= _quantile(hops, 0.5) < 0.0015  # most hops near the 1 ms mean
    assert _quantile(hops, 0.9) < 0.004
    assert _quantile(hops, 0.995) > 0.02  # one hop in a hundred spikes past 20 ms
    assert 0.007 < sum(hop >= 20_000_000 for hop in hops) / len(hops) < 0.013
    assert max(hops) <= 250_000_000
    light = NetworkConfig(latency_model="exponential")
    hops = _hops(light, 20_000)
    assert min(hops) >= 500_000 and max(hops) <= 5_000_000  # min and the cap
    # the tail fields exist but change nothing there
    spiky = NetworkConfig(
        latency_model="exponential",
        latency_tail_probability=0.5,
        latency_tail_min=1.0,
        latency_tail_max=2.0,
    )
    assert _hops(spiky, 1000) == hops[:1000]


def test_a_lan_tail_keeps_most_hops_near_the_mean_and_spikes_past_a_timeout() -> None:
    config = tail_config("lan", 0.02)
    hops = [hop for seed in range(10) for hop in _hops(config, 5000, seed)]
    assert _quantile(hops, 0.5) < 0.0005  # a LAN hop: a fraction of a millisecond
    assert _quantile(hops, 0.9) < 0.002
    assert _quantile(hops, 0.99) > 0.04  # well past a 20-30 ms application timeout
    assert max(hops) <= 250_000_000 and min(hops) >= 50_000
    spikes = sum(hop >= 20_000_000 for hop in hops) / len(hops)
    assert 0.015 < spikes < 0.025


def test_each_direction_of_a_link_has_its_own_spread() -> None:
    config = tail_config("datacenter", 0.02)
    trace = Trace()
    links = Links(Entropy(3, trace).stream("net"), trace, config, lambda: ["a", "b"])
    there, back = links.get("a", "b"), links.get("b", "a")
    assert there.scale != back.scale and all(0.5 <= s < 2.0 for s in (there.scale, back.scale))
    means = []
    for link in (there, back):
        body = [hop for hop in (links.latency_ns(link) for _ in range(20_000)) if hop < 20_000_000]
        means.append(sum(body) / len(body) - 500_000)  # above the minimum
    expected = there.scale / back.scale
    assert means[0] / means[1] == pytest.approx(expected, rel=0.1)


def test_the_tails_draws_are_pinned() -> None:
    # Raw bits, exact arithmetic and the C library's log1p/log/exp: the same
    # values on 3.11, 3.12 and 3.13 (a change means every tail seed moved).
    assert sum(_hops(tail_config("lan", 0.06), 2000, seed=11)) == PINNED_SUM


PINNED_SUM = 13277202903


def test_a_stream_keeps_its_order_through_spikes() -> None:
    got: list[int] = []
    sent_at: list[float] = []
    arrived_at: list[float] = []

    async def server() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                got.append(int(line))
                arrived_at.append(asyncio.get_running_loop().time())

        await asyncio.start_server(handle, "0.0.0.0", 6000)
        await asyncio.sleep(3600)

    async def client() -> None:
        _, writer = await asyncio.open_connection("s", 6000)
        for n in range(500):
            writer.write(b"%d\n" % n)
            sent_at.append(asyncio.get_running_loop().time())
            await asyncio.sleep(0.001)
        await asyncio.sleep(2.0)

    sim = Simulation(seed=5, network=tail_config("lan", 0.06))
    sim.host("s", server)
    sim.client("c", client)
    sim.run(max_time=60.0)
    assert got == list(range(500))
    slowest = max(a - s for s, a in zip(sent_at, arrived_at, strict=True))
    assert slowest > 0.02  # some segment spiked (and held the ones behind it)


def test_every_swarm_seed_draws_the_tail_model_with_its_own_spike_rate() -> None:
    tails = [_swarm_network(seed) for seed in range(100)]
    assert {config.latency_model for config in tails} == {"tail"}  # never less than the default
    rates = [config.latency_tail_probability for config in tails]
    assert all(0.01 <= rate <= 0.06 for rate in rates)
    assert len(set(rates)) > 50  # drawn per seed


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"latency_model": "pareto"}, "NetworkConfig.latency_model must be one of"),
        ({"latency_tail_probability": 1.5}, "NetworkConfig.latency_tail_probability must be"),
        ({"latency_tail_min": 0.5, "latency_tail_max": 0.1},
         "NetworkConfig.latency_tail_max must be"),
    ],
)  # fmt: skip
def test_a_bad_tail_setting_is_a_one_line_usage_error(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError) as info:
        NetworkConfig(**settings)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
