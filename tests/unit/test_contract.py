"""A broken simulator contract fails the run as a SimulatorBug with the seed,
even when the user's code around the call that found it swallows it."""

from __future__ import annotations

import asyncio

import pytest

import seedbed
from seedbed._core import contract


def test_a_broken_rule_outside_a_run_is_a_plain_simulator_bug() -> None:
    with pytest.raises(seedbed.SimulatorBug, match="seedbed broke its own rule: x holds"):
        contract.require(False, "x holds", x=3)
    contract.require(True, "x holds")  # a kept rule costs nothing


def test_a_broken_rule_inside_a_run_fails_it_with_seed_and_replay() -> None:
    async def main() -> str:
        await asyncio.sleep(0.1)
        try:
            contract.broken("pipe delivers at most what was sent", sent=1, delivered=2)
        except Exception:
            pass  # user code that catches everything cannot hide it
        await asyncio.sleep(0.1)
        return "finished"

    with pytest.raises(seedbed.SimulatorBug) as caught:
        seedbed.run(main, seed=77)
    assert caught.value.seed == 77
    assert "delivered=2" in str(caught.value)
    assert caught.value.replay
    assert caught.value.steps is not None and caught.value.steps > 0
