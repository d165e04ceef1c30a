"""Stall episodes in the default timing model (issue 45, item 1).

Real stalls are correlated: a link holds everything for tens to hundreds of
milliseconds, then lets it through in order. A failure detector with a
timeout shorter than a stall must be found to split; one with a timeout
longer than any stall must never be.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

import seedbed
from seedbed import FaultProfile, NetworkConfig, Scenario, Simulation

BEAT = 0.01  # the primary's heartbeat


def _pair(
    promote_after: float, beats: list[int] | None = None, times: list[float] | None = None
) -> Any:
    """A primary heartbeating over UDP and a backup that promotes itself after
    `promote_after` seconds of silence; `beats` collects the beats' numbers
    as they arrive, `times` their arrival times."""

    def setup(sim: Simulation) -> None:
        async def primary() -> None:
            loop = asyncio.get_running_loop()
            transport, _ = await loop.create_datagram_endpoint(
                asyncio.DatagramProtocol, remote_addr=("backup", 7000)
            )
            for number in range(100_000):
                transport.sendto(number.to_bytes(4, "big"))
                await asyncio.sleep(BEAT)

        async def backup() -> None:
            loop = asyncio.get_running_loop()
            heard = [loop.time()]

            class Beats(asyncio.DatagramProtocol):
                def datagram_received(self, data: bytes, addr: Any) -> None:
                    heard[0] = loop.time()
                    if beats is not None:
                        beats.append(int.from_bytes(data, "big"))
                    if times is not None:
                        times.append(loop.time())

            await loop.create_datagram_endpoint(Beats, local_addr=("0.0.0.0", 7000))
            while True:
                await asyncio.sleep(0.005)
                silent = loop.time() - heard[0]
                seedbed.always(silent <= promote_after, "the backup stays a backup", silent=silent)

        sim.host("primary", primary)
        sim.host("backup", backup)

    return setup


def test_a_heartbeat_timeout_shorter_than_a_stall_splits_within_a_few_dozen_seeds() -> None:
    scenario = Scenario("split", _pair(0.05), duration=2.0)
    failures = [scenario.execute(seed, last_events=False)[1] for seed in range(40)]
    found = [error for error in failures if error is not None]
    assert found, "no stall outlasted a 50 ms timeout in 40 seeds"
    assert all(error.report.faults["link_stall"]["effective"] >= 1 for error in found)


def test_a_timeout_longer_than_any_stall_never_splits() -> None:
    scenario = Scenario("steady", _pair(0.3), duration=2.0)  # stall_max is 0.25 s
    assert [seed for seed in range(40) if scenario.execute(seed)[1] is not None] == []


def test_a_stall_holds_a_links_datagrams_and_releases_them_in_order() -> None:
    held = []
    for seed in range(20):
        beats: list[int] = []
        network = NetworkConfig(stall_per_second=2.0, latency_tail_probability=0.0)
        result, error = Scenario("order", _pair(10.0, beats), duration=2.0,
                                 network=network).execute(seed)  # fmt: skip
        assert error is None and result is not None
        assert beats == sorted(beats)  # spikes off: only a stall could reorder, and it does not
        held.append(result.faults["link_stall"]["effective"])
    assert sum(held) >= 20  # two episodes a second on the one busy link


@pytest.mark.parametrize(
    "network",
    [NetworkConfig(stall_per_second=0.0), NetworkConfig(latency_model="exponential")],
    ids=["rate 0", "light tail"],
)
def test_no_stall_without_the_tail_model_or_with_rate_zero(network: NetworkConfig) -> None:
    scenario = Scenario("none", _pair(0.05), duration=2.0, network=network)
    for seed in range(10):
        result, error = scenario.execute(seed)
        assert error is None and result is not None and "link_stall" not in result.faults


def test_the_liveness_phase_ends_stalls_and_a_profile_adds_to_them() -> None:
    beats: list[int] = []
    times: list[float] = []

    def late_beats_arrive() -> bool:
        return len(beats) >= 200  # two seconds of beats

    profile = FaultProfile(link_stall_per_second=20.0)  # stalled much of the fault phase
    network = NetworkConfig(latency_tail_probability=0.0)  # no lone spike: only stalls
    scenario = Scenario("live", _pair(10.0, beats, times), faults=profile, duration=1.0,
                        liveness=[late_beats_arrive], network=network)  # fmt: skip
    result, error = scenario.execute(3)
    assert error is None and result is not None
    assert result.faults["link_stall"]["effective"] >= 5
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert max(gaps[:90]) >= 0.02  # the fault phase stalled
    late = [gap for gap, time in zip(gaps, times[1:], strict=True) if time > 1.01]
    assert len(late) >= 40 and max(late) < 0.02  # the liveness phase did not (20 ms: stall_min)
    Simulation(0).stop_stalls()  # a world verb, safe before any traffic


def test_stalls_replay_to_the_same_hash() -> None:
    network = NetworkConfig(stall_per_second=2.0)
    scenario = Scenario("again", _pair(10.0), duration=2.0, network=network)
    first, second = scenario.execute(30)[0], scenario.execute(30)[0]
    assert first is not None and second is not None
    assert first.trace_hash == second.trace_hash


def test_a_bad_stall_setting_is_refused_in_one_line() -> None:
    with pytest.raises(seedbed.UsageError, match="stall_per_second"):
        NetworkConfig(stall_per_second=-1.0)
    with pytest.raises(seedbed.UsageError, match="stall_max"):
        NetworkConfig(stall_min=0.3, stall_max=0.2)
