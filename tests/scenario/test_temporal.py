"""`seedbed.eventually` and `seedbed.leads_to`: bounds judged while faults go on (issue 45)."""

from __future__ import annotations

import math

import pytest
from tests.scenario import _temporal_world as world

import seedbed
from seedbed import InvariantViolation, Scenario, UsageError

TARGET = "tests.scenario._temporal_world"


def test_a_one_second_response_bound_breaks_during_a_long_partition_and_says_why() -> None:
    _, error = world.responded_in_1.execute(1)
    assert isinstance(error, InvariantViolation)
    first = str(error).splitlines()[0]
    assert first == (
        "invariant leads_to(sent, answered, within=1) broke: key 50 entered sent at t=5.050s "
        "and was not in answered by t=6.050s (bound 1s; seen at t=6.060s; 9 more pending)"
    )
    assert "link c<->server cut (partition)" in str(error)  # the fault that explains it
    assert f"replay: seedbed run {TARGET}:responded_in_1 --seed 1" in str(error)
    assert error.report is not None and error.report.seed == 1
    assert error.report.location is not None and "_temporal_world.py" in error.report.location


def test_a_hundred_second_bound_never_breaks_fixed_or_under_a_nemesis_of_long_cuts() -> None:
    assert world.responded_in_100.execute(1)[1] is None
    broke_in_1 = [world.swept_in_1.execute(seed)[1] is not None for seed in range(8)]
    assert sum(broke_in_1) >= 4  # the long cuts break the 1 s bound in most seeds
    assert all(world.swept_in_100.execute(seed)[1] is None for seed in range(8))


def test_no_false_positive_without_faults() -> None:
    assert all(world.calm_in_1.execute(seed)[1] is None for seed in range(5))


def test_eventually_bounds_how_long_a_predicate_stays_false() -> None:
    assert world.drained_in_5.execute(1)[1] is None  # false for 4 s and a little
    _, error = world.drained_in_3.execute(1)
    assert isinstance(error, InvariantViolation)
    assert str(error).splitlines()[0] == (
        "invariant eventually(all_answered, within=3) broke: false since t=5.050s, past its "
        "bound of 3s at t=8.050s (seen at t=8.080s; it returned false)"
    )


def test_one_declaration_serves_every_seed_with_fresh_state_and_does_not_change_the_run() -> None:
    first = str(world.responded_in_1.execute(1)[1])
    assert str(world.responded_in_1.execute(2)[1]) != first  # ran; its own timing
    assert str(world.responded_in_1.execute(1)[1]) == first  # nothing kept from before
    plain = Scenario("cut 4s", lambda sim: world.world(sim, cut_for=4.0), duration=40.0)
    watched, _ = world.responded_in_100.execute(3)
    assert watched.trace_hash == plain.execute(3)[0].trace_hash  # an oracle, not a force
    catalog = watched.assertions["invariant leads_to(sent, answered, within=100)"]
    assert catalog["kind"] == "invariant" and catalog["evaluated"] == catalog["true"] > 100


def test_bad_declarations_are_refused_at_once() -> None:
    for within in (0, -1, math.nan, math.inf, "1"):
        with pytest.raises(UsageError, match="within"):
            seedbed.eventually(world.all_answered, within=within)  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="within"):
            seedbed.leads_to(world.sent, world.answered, within=within)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="trigger must be a zero-argument callable"):
        seedbed.leads_to(1, world.answered, within=1)  # type: ignore[arg-type]
    declared = seedbed.eventually(world.all_answered, within=1)
    with pytest.raises(UsageError, match="put it in a Scenario's invariants"):
        declared()


def test_a_trigger_that_returns_no_collection_breaks_the_property_saying_so() -> None:
    broken = seedbed.leads_to(lambda: 3, world.answered, within=1)
    count = Scenario("count", lambda sim: world.world(sim, cut_at=None), duration=5.0,
                     invariants=[broken])  # fmt: skip
    _, error = count.execute(0)
    assert isinstance(error, InvariantViolation)
    assert "returned int, not a collection of keys" in str(error)
