"""Quality: the example scenario's planted bug is found, and its fix holds."""

from __future__ import annotations

from examples import counter

from seedbed import InvariantViolation
from seedbed._harness.targets import run_target


def test_the_counters_forgotten_request_ids_are_found_within_200_seeds() -> None:
    for seed in range(200):
        outcome = run_target(counter.counter, seed)
        if outcome.error is not None:
            break
    else:
        raise AssertionError("200 seeds of crashes and partitions never counted a retry twice")
    assert isinstance(outcome.error, InvariantViolation), outcome.error
    assert "counted_at_most_once broke" in str(outcome.error)
    assert outcome.replay == f"seedbed run examples.counter:counter --seed {seed}"
    assert outcome.faults is not None and outcome.faults["crash"]["effective"] >= 1


def test_the_fixed_counter_passes_500_seeds() -> None:
    retried = 0
    for seed in range(500):
        outcome = run_target(counter.counter_fixed, seed)
        assert outcome.error is None, f"seed {seed}: {outcome.error}"
        assert outcome.value == {f"c{n}": counter.INCREMENTS for n in range(counter.CLIENTS)}
        retried += (outcome.assertions or {})["a client retried an increment"]["true"] > 0
    assert retried >= 100  # the faults did make clients retry: the fix was exercised
