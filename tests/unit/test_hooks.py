"""buggify, failpoint and the assertions: free outside a run, counted and
injected inside one (FoundationDB's buggify semantics)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest

import seedbed
from seedbed import InvariantViolation, SimulatedFailure, Simulation
from seedbed.faults import configure


def _python_calls_made_by(call: Callable[[], Any]) -> list[str]:
    """The Python functions (besides `call` itself) entered while `call` runs."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize(
    "hook",
    [
        lambda: seedbed.buggify("slow path"),
        lambda: seedbed.failpoint("disk write"),
        lambda: seedbed.always(True, "fine", x=1),
        lambda: seedbed.sometimes(False, "rare"),
        lambda: seedbed.reachable("here"),
        lambda: seedbed.unreachable("never"),
    ],
)
def test_outside_a_simulation_each_hook_is_one_python_frame(hook: Callable[[], Any]) -> None:
    # The cost contract (under 100 ns a call): the hook enters no Python
    # function but itself (the running-loop check is a C call).
    calls = _python_calls_made_by(hook)
    assert calls[0] == "<lambda>" and len(calls) == 2, calls


def test_outside_a_simulation_nothing_is_injected() -> None:
    assert not any(seedbed.buggify("x") for _ in range(1000))

    async def main() -> int:
        for _ in range(1000):
            await seedbed.failpoint("x")
        seedbed.unreachable("production keeps this line")
        return 1

    assert asyncio.run(main()) == 1  # a real asyncio loop: also outside a simulation


def test_outside_a_simulation_always_is_a_plain_check_showing_details() -> None:
    seedbed.always(True, "fine")
    with pytest.raises(AssertionError, match=r"^balance negative \(balance=-3, node='n1'\)$"):
        seedbed.always(False, "balance negative", balance=-3, node="n1")


def _buggify_world(seed: int, on: bool, sites: int = 40, calls: int = 40) -> list[list[bool]]:
    fired: list[list[bool]] = [[] for _ in range(sites)]

    async def client() -> None:
        for _ in range(calls):
            for site in range(sites):
                fired[site].append(_site(site))
            await asyncio.sleep(0.01)

    sim = Simulation(seed=seed)
    if on:
        configure(sim, buggify=True)
    sim.client("c", client)
    sim.run()
    return fired


_SITES: list[Callable[[], bool]] = [  # ten call sites: one line each
    lambda: seedbed.buggify("s0"),
    lambda: seedbed.buggify("s1"),
    lambda: seedbed.buggify("s2"),
    lambda: seedbed.buggify("s3"),
    lambda: seedbed.buggify("s4"),
    lambda: seedbed.buggify("s5"),
    lambda: seedbed.buggify("s6"),
    lambda: seedbed.buggify("s7"),
    lambda: seedbed.buggify("s8"),
    lambda: seedbed.buggify("s9"),
]


def _site(n: int) -> bool:
    return _SITES[n % 10]()


def test_buggify_is_off_in_a_simulation_unless_turned_on() -> None:
    fired = _buggify_world(seed=1, on=False, sites=10)
    assert not any(any(calls) for calls in fired)


def test_buggify_enables_a_quarter_of_sites_once_per_run_and_they_fire_a_quarter_of_the_time() -> (
    None
):
    enabled = 0
    fires = 0
    enabled_calls = 0
    for seed in range(40):
        fired = _buggify_world(seed=seed, on=True, sites=10, calls=80)
        for calls in fired:  # sites 0-9 map to the 10 lambdas: one site each
            if any(calls):
                enabled += 1
                fires += sum(calls)
                enabled_calls += len(calls)
    assert 0.15 < enabled / 400 < 0.35
    assert 0.2 < fires / enabled_calls < 0.3


def test_buggify_decisions_replay_under_the_same_seed_and_differ_across_seeds() -> None:
    assert _buggify_world(7, True, 10) == _buggify_world(7, True, 10)
    assert len({str(_buggify_world(seed, True, 10)) for seed in range(5)}) > 1


def test_failpoint_raises_a_simulated_failure_that_is_not_a_cancellation() -> None:
    outcomes: list[str] = []

    async def client() -> None:
        for _ in range(200):
            try:
                await seedbed.failpoint("write block")
                outcomes.append("ok")
            except SimulatedFailure as exc:
                assert not isinstance(exc, asyncio.CancelledError)
                assert exc.why == "write block"
                outcomes.append("failed")

    sim = Simulation(seed=3)
    configure(sim, failpoint_probability=0.1)
    sim.client("c", client)
    sim.run()
    assert 5 < outcomes.count("failed") < 40
    assert outcomes.count("ok") + outcomes.count("failed") == 200


def test_an_unhandled_failpoint_fails_the_run_with_its_seed() -> None:
    async def client() -> None:
        while True:
            await seedbed.failpoint("fsync")
            await asyncio.sleep(0.1)

    sim = Simulation(seed=5)
    configure(sim, failpoint_probability=0.5)
    sim.client("c", client)
    with pytest.raises(SimulatedFailure, match="fsync") as info:
        sim.run()
    assert any("seed=5" in note for note in info.value.__notes__)


def test_a_false_always_fails_the_run_even_when_the_exception_is_swallowed() -> None:
    async def client() -> None:
        try:
            seedbed.always(1 + 1 == 3, "arithmetic broke", got=2)
        except Exception:
            pass  # the run has failed anyway
        await asyncio.sleep(10)

    sim = Simulation(seed=11)
    sim.client("c", client)
    with pytest.raises(InvariantViolation, match=r"arithmetic broke \(got=2\)") as info:
        sim.run()
    assert info.value.seed == 11
    assert info.value.context is not None and info.value.context.virtual_time_ns < 10**9


def test_reaching_unreachable_fails_the_run() -> None:
    async def main() -> None:
        seedbed.unreachable("the lost-update path")

    with pytest.raises(InvariantViolation, match="unreachable code was reached: the lost-update"):
        seedbed.run(main, seed=0)


def test_the_catalog_counts_evaluations_and_truths_with_their_location() -> None:
    from seedbed.faults._hooks import hooks_of

    async def client() -> None:
        for i in range(10):
            seedbed.sometimes(i % 3 == 0, "divisible by three")
            seedbed.always(i < 10, "small")
        seedbed.reachable("finished the loop")

    sim = Simulation(seed=0)
    sim.client("c", client)
    sim.run()
    catalog = hooks_of(sim.loop).assertions()
    assert catalog["divisible by three"]["evaluated"] == 10
    assert catalog["divisible by three"]["true"] == 4
    assert catalog["divisible by three"]["kind"] == "sometimes"
    assert catalog["small"] == {
        "kind": "always",
        "evaluated": 10,
        "true": 10,
        "location": catalog["small"]["location"],
    }
    assert catalog["small"]["location"].startswith(__file__ + ":")
    assert catalog["finished the loop"]["kind"] == "reachable"
    assert list(catalog) == ["divisible by three", "small", "finished the loop"]
