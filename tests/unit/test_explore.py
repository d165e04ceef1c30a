"""Task-order exploration and coarse clocks: races that only they expose."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from examples.orders import depth_two_world, lost_update, timer_tie

import seedbed
from seedbed import NetworkConfig, Scenario, Simulation, UsageError
from seedbed.scenario._scenario import LATENCY_PROFILES, _swarm_network


def fails(seed: int, **options: object) -> bool:
    try:
        seedbed.run(lost_update, seed=seed, **options)
    except AssertionError:
        return True
    return False


def test_the_lost_update_between_tasks_is_found_by_default_and_only_with_task_order() -> None:
    assert not any(fails(seed, explore_tasks=False) for seed in range(300))
    found = [seed for seed in range(20) if fails(seed)]
    assert found, "task-order exploration (on by default) missed the race in 20 seeds"


def test_a_node_s_tasks_are_explored_inside_a_world() -> None:
    def world_fails(seed: int, explore: bool) -> bool:
        sim = Simulation(seed=seed, explore_tasks=explore)
        sim.client("node", lost_update)
        try:
            sim.run(max_time=10)
        except AssertionError:
            return True
        return False

    assert not any(world_fails(seed, False) for seed in range(100))
    assert any(world_fails(seed, True) for seed in range(20))


def test_plain_callbacks_keep_call_soon_order_and_each_seed_replays() -> None:
    async def main() -> tuple[list[int], list[str]]:
        loop = asyncio.get_running_loop()
        calls: list[int] = []
        resumed: list[str] = []

        async def task(name: str) -> None:
            await asyncio.sleep(0)
            resumed.append(name)

        tasks = [asyncio.create_task(task(name)) for name in "abcdef"]
        for i in range(6):
            loop.call_soon(calls.append, i)
        await asyncio.gather(*tasks)
        return calls, resumed

    orders = set()
    for seed in range(20):
        first = seedbed.run(main, seed=seed, explore_tasks=True)
        again = seedbed.run(main, seed=seed, explore_tasks=True)
        assert first.trace_hash == again.trace_hash and first.value == again.value
        calls, resumed = first.value
        assert calls == list(range(6))
        assert sorted(resumed) == list("abcdef")
        orders.add("".join(resumed))
    assert len(orders) > 10  # the tasks' order is drawn, not fixed
    assert seedbed.run(main, seed=0, explore_tasks=False).value[1] == list("abcdef")  # FIFO


def test_the_draw_is_labelled_and_the_option_in_the_trace_header(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with pytest.raises(AssertionError):
        seedbed.run(lost_update, seed=1, trace=path)  # explore_tasks is on by default
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["options"]["explore_tasks"] is True
    assert any("order of task steps ready together" in json.dumps(line) for line in lines)


def test_options_are_validated_on_one_line() -> None:
    with pytest.raises(UsageError, match=r"LoopConfig.explore_tasks must be a bool, got 'yes'"):
        seedbed.run(lost_update, seed=0, explore_tasks="yes")
    refused = r"LoopConfig.clock_resolution must be a number of seconds in \[0, "
    with pytest.raises(UsageError, match=refused):
        seedbed.run(lost_update, seed=0, clock_resolution=-0.01)
    with pytest.raises(UsageError, match=r"at least 1e-09 seconds"):
        seedbed.run(lost_update, seed=0, clock_resolution=1e-12)


def lost_update_world(sim: Simulation) -> None:
    sim.client("node", lost_update)


EXPLORING = Scenario("lost update", lost_update_world, faults="swarm")
PLAIN = Scenario("lost update", lost_update_world, faults="swarm", explore_tasks=False)


def test_a_swarm_scenario_explores_task_order_unless_turned_off() -> None:
    def failed(scenario: Scenario, seed: int) -> bool:
        return scenario.execute(seed)[1] is not None

    assert not any(failed(PLAIN, seed) for seed in range(30))
    assert sum(failed(EXPLORING, seed) for seed in range(30)) >= 10


def tie_fails(seed: int, **options: object) -> bool:
    try:
        seedbed.run(timer_tie, seed=seed, **options)
    except AssertionError:
        return True
    return False


def test_a_timer_tie_is_found_by_default_and_only_on_a_coarse_clock() -> None:
    assert not any(tie_fails(seed, clock_resolution=0) for seed in range(300))
    assert any(tie_fails(seed) for seed in range(20))


TIE_DRAW = "order of timers due at one instant"


def test_a_tie_of_sleeps_is_ordered_by_its_wakeups_draw_and_found_either_way(
    tmp_path: Path,
) -> None:
    # Under task-order exploration a tie of sleeps is not drawn (issue 50): each only
    # wakes its task, whose wakeups the next batch draws. Without it the tie is drawn.
    assert any(tie_fails(seed, explore_tasks=False) for seed in range(20))
    assert any(not tie_fails(seed, explore_tasks=False) for seed in range(20))
    orders = set()
    for seed in range(20):
        path = tmp_path / f"tie-{seed}.jsonl"
        orders.add(tie_fails_traced(seed, path))
        traced = path.read_text()
        assert TIE_DRAW not in traced and "order of task steps ready together" in traced
    assert orders == {True, False}  # both wake orders come


def tie_fails_traced(seed: int, path: Path) -> bool:
    try:
        seedbed.run(timer_tie, seed=seed, trace=path)
    except AssertionError:
        return True
    return False


def test_a_tie_of_plain_timer_callbacks_is_still_drawn_under_task_order() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        fired: list[str] = []
        done = loop.create_future()
        loop.call_later(0.0004, fired.append, "first")
        loop.call_later(0.0004, fired.append, "second")
        loop.call_later(0.002, done.set_result, None)
        await done
        return fired

    firsts = {seedbed.run(main, seed=seed).value[0] for seed in range(20)}
    assert firsts == {"first", "second"}  # a plain callback keeps its slot: the tie decides


def test_coarse_timers_are_never_early_and_at_most_a_tick_late() -> None:
    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        woke = []
        for delay in (0.0004, 0.0151, 0.02):
            start = loop.time()
            await asyncio.sleep(delay)
            woke.append(loop.time() - start)
        return woke

    for seed in range(5):
        woke = seedbed.run(main, seed=seed, clock_resolution=0.005).value
        for elapsed, delay in zip(woke, (0.0004, 0.0151, 0.02), strict=True):
            assert delay <= elapsed < delay + 0.005 + 0.0001  # at most a tick (and CPU) late


def round_trip_world(sim: Simulation, network: NetworkConfig) -> float:
    """The virtual time a's datagram takes to reach b (one hop)."""
    arrived: list[float] = []

    async def b() -> None:
        loop = asyncio.get_running_loop()

        class Receiver(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: Any) -> None:
                arrived.append(loop.time())

        await loop.create_datagram_endpoint(Receiver, local_addr=("0.0.0.0", 7000))
        await asyncio.sleep(10)

    async def a() -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(1)
        transport, _ = await loop.create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=("b", 7000)
        )
        transport.sendto(b"x")
        await asyncio.sleep(2)

    sim.host("b", b)
    sim.client("a", a)
    sim.host("c", b)
    sim.run(max_time=20)
    return arrived[0] - 1


def test_per_link_latency_by_pair_and_by_node() -> None:
    slow_pair = NetworkConfig(link_latency={("b", "a"): (0.2, 0.2, 0.2)})
    assert 0.2 <= round_trip_world(Simulation(seed=1, network=slow_pair), slow_pair) < 0.21
    slow_node = NetworkConfig(link_latency={"a": (0.05, 0.05, 0.05), "c": (1.0, 1.0, 1.0)})
    assert 0.05 <= round_trip_world(Simulation(seed=1, network=slow_node), slow_node) < 0.06
    both = NetworkConfig(link_latency={"a": (0.05, 0.05, 0.05), "b": (0.01, 0.07, 0.09)})
    assert both.latency_of("a", "b") == (0.05, 0.07, 0.09)  # the slower end of each
    assert both.latency_of("c", "d") == (both.latency_min, both.latency_mean, both.latency_max)
    assert both.as_dict()["link_latency"] == {"a": [0.05, 0.05, 0.05], "b": [0.01, 0.07, 0.09]}
    pair = NetworkConfig(link_latency={("a", "b"): (0.1, 0.2, 0.3)}).as_dict()
    assert pair["link_latency"] == {"a<->b": [0.1, 0.2, 0.3]}


def test_per_link_latency_is_validated() -> None:
    with pytest.raises(UsageError, match=r"link_latency\['a'\] must be \(min, mean, max\)"):
        NetworkConfig(link_latency={"a": 0.1})
    with pytest.raises(UsageError, match=r"link_latency\['a'\].max must be >= mean"):
        NetworkConfig(link_latency={"a": (0.1, 0.2, 0.15)})
    with pytest.raises(UsageError, match=r"keys must be node names or \(node, node\) pairs"):
        NetworkConfig(link_latency={("a",): (0.1, 0.2, 0.3)})


def test_swarm_draws_a_latency_profile_per_seed() -> None:
    seen = set()
    for seed in range(40):
        network = _swarm_network(seed)
        seen.add((network.latency_min, network.latency_model))
        assert _swarm_network(seed) == network  # a function of the seed
        assert 0.01 <= network.latency_tail_probability <= 0.06
    lows = {low for low, _ in seen}
    assert lows == {low for low, _, _ in LATENCY_PROFILES.values()}
    assert {model for _, model in seen} == {"tail"}  # never less than the default's tail


def test_a_standalone_loop_takes_the_options() -> None:
    found = []
    for seed in range(20):
        with asyncio.Runner(
            loop_factory=functools.partial(seedbed.new_event_loop, seed, explore_tasks=True)
        ) as r:
            try:
                r.run(lost_update())
            except AssertionError:
                found.append(seed)
    assert found


def depth_two_fails(seed: int, **options: object) -> bool:
    sim = Simulation(seed=seed, **options)
    depth_two_world(sim)
    try:
        sim.run(max_time=10)
    except (AssertionError, seedbed.InvariantViolation):
        return True
    return False


def test_pct_finds_a_depth_two_bug_that_random_scheduling_misses() -> None:
    assert not any(depth_two_fails(seed) for seed in range(200))
    pct = [
        seed
        for seed in range(60)
        if depth_two_fails(seed, strategy="pct", pct_depth=2, pct_steps=60)
    ]
    assert len(pct) >= 3
    # depth 1 (no change point) runs one node to its end first: never midway
    assert not any(depth_two_fails(seed, strategy="pct", pct_depth=1) for seed in range(60))
    # a failing seed replays: the same priorities and change points
    assert depth_two_fails(pct[0], strategy="pct", pct_depth=2, pct_steps=60)


def test_pct_with_nothing_set_draws_its_depth_per_run_and_still_finds_the_bug() -> None:
    """No step count to tune: each run draws d in 1..4 and log-scale change points."""
    found = [seed for seed in range(60) if depth_two_fails(seed, strategy="pct")]
    assert found, "PCT with drawn depths never found the depth-two bug in 60 seeds"
    assert all(depth_two_fails(seed, strategy="pct") for seed in found[:3])  # replays


def test_pct_orders_task_steps_with_explore_tasks() -> None:
    found = [
        seed
        for seed in range(40)
        if fails(seed, explore_tasks=True, strategy="pct", pct_depth=2, pct_steps=10)
    ]
    assert found


def test_pct_options_are_validated() -> None:
    one_of = r"strategy must be one of 'random', 'pct', 'pos', got 'dfs'"
    with pytest.raises(UsageError, match=one_of):
        seedbed.run(lost_update, seed=0, strategy="dfs")
    with pytest.raises(UsageError, match=r"pct_depth must be an int in \[1, 2\*\*62\], got 0"):
        seedbed.run(lost_update, seed=0, strategy="pct", pct_depth=0)
    with pytest.raises(UsageError, match=r'apply only with strategy="pct"'):
        seedbed.run(lost_update, seed=0, pct_depth=2)


REPO = Path(__file__).resolve().parents[2]


def seedbed_cli(*args: str, out: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests" / "unit")}
    env.pop("SEEDBED_REEXEC", None)
    if out is not None:
        env.update(PYTHONBREAKPOINT="_break_hook.record", SEEDBED_TEST_BREAK_OUT=str(out))
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def failure_lines(stderr: str) -> list[str]:
    """The error, its seed/step/time, its replay and the debug hint."""
    lines = stderr.splitlines()
    hint = next(i for i, line in enumerate(lines) if line.startswith("debug it:"))
    return lines[hint - 3 : hint + 1]


def test_break_at_the_failing_step_stops_in_the_failing_node(tmp_path: Path) -> None:
    target = ("run", "examples.orders:depth_two", "--seed", "1")
    failed = seedbed_cli(*target)
    assert failed.returncode == 1
    hint = re.search(r"debug it: (seedbed run .*) --break-at (\d+)", failed.stderr)
    assert hint is not None, failed.stderr
    step = int(hint.group(2))
    assert f"step={step} " in failed.stderr  # the report names the step it suggests
    out = tmp_path / "break.jsonl"
    stopped = seedbed_cli(*target, "--break-at", str(step), out=out)
    assert stopped.returncode == 1  # the run goes on to fail as before
    assert failure_lines(stopped.stderr) == failure_lines(failed.stderr)  # the same failure
    assert "seedbed: stopped before step" in stopped.stdout
    [facts] = [json.loads(line) for line in out.read_text().splitlines()]
    assert facts["step"] == step == facts["loop_steps"]  # step S begun, its code not yet run
    assert facts["node"] == "b"  # b's step fails its assertion
    assert facts["frame_function"] == "b"  # b's coroutine frame, suspended at its await


SCENARIO = """
import asyncio
from seedbed import Scenario

async def idle():
    await asyncio.sleep(1)

def setup(sim):
    sim.client("c1", idle)

def never():
    return False

breaks = Scenario("breaks", setup, duration=1.0, invariants=[never])
"""


def test_break_at_stops_once_though_the_report_runs_the_seed_again(tmp_path: Path) -> None:
    (tmp_path / "breaking.py").write_text(SCENARIO)
    out = tmp_path / "break.jsonl"
    target = f"{tmp_path / 'breaking.py'}:breaks"
    stopped = seedbed_cli("run", target, "--seed", "3", "--break-at", "1", out=out)
    assert stopped.returncode == 1, stopped.stderr
    assert "InvariantViolation: invariant never broke" in stopped.stderr
    assert stopped.stdout.count("seedbed: stopped before step") == 1
    assert len(out.read_text().splitlines()) == 1


def test_break_at_a_virtual_time_and_bad_values(tmp_path: Path) -> None:
    out = tmp_path / "break.jsonl"
    done = seedbed_cli("run", "examples.race:main", "--seed", "7", "--break-at", "0.5s", out=out)
    assert done.returncode == 1
    [facts] = [json.loads(line) for line in out.read_text().splitlines()]
    assert facts["virtual_time"] == facts["loop_time"] >= 0.5
    before = tmp_path / "before.jsonl"  # the step before it ran before 0.5 s: the first after
    step = str(facts["step"] - 1)
    seedbed_cli("run", "examples.race:main", "--seed", "7", "--break-at", step, out=before)
    assert json.loads(before.read_text())["virtual_time"] < 0.5
    for bad in ("0", "-1", "soon", "nan"):
        refused = seedbed_cli("run", "examples.race:main", "--seed", "7", "--break-at", bad)
        assert refused.returncode == 2
        assert refused.stderr.strip().endswith(f"got {bad!r}"), refused.stderr
