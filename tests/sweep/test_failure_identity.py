"""One identity per failure (issues 24.5, 28.5): one bug, one bucket.

A failure's identity is its kind, the user's file:line where it was raised
and the claim it broke, with the values that differ from seed to seed masked
in its message: numbers, hex ids, uuids, ids in quotes, the world's own node
names, and the order of a dict's or set's items. The sweep's buckets, its
summary and report, and the shrinker's "same failure" all use it.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import seedbed
from seedbed import Scenario, Simulation
from seedbed._harness.report._aggregate import Aggregate
from seedbed._harness.shrink._trial import failure_of
from seedbed._harness.sweeps._record import build, describe_error, mask_message, record_identity
from seedbed._harness.sweeps._summary import summarize
from seedbed._harness.targets import run_target


def _fails_with(message: str, seed: int = 1) -> BaseException:
    """A run that raises `message` from one line of user code."""

    async def main() -> None:
        raise AssertionError(message)  # the one raise site of this "bug"

    return _failure(main, seed)


def _failure(main: Any, seed: int) -> BaseException:
    try:
        seedbed.run(main, seed=seed)
    except Exception as exc:  # a plain program's own error leaves the run as it was raised
        return exc
    raise RuntimeError("the run did not fail")


def _fails_elsewhere(message: str) -> BaseException:
    async def main() -> None:
        raise AssertionError(message)  # a second raise site: another bug

    return _failure(main, 1)


def _buckets(errors: list[BaseException]) -> set[str]:
    return {describe_error(error)["bucket"] for error in errors}


def test_hex_ids_and_uuids_do_not_split_a_bug() -> None:
    errors = [
        _fails_with(f"lost object at 0x7f{n:08x}, request {n:08x}-1c2d-4e5f-8a9b-00000000{n:04x}")
        for n in range(50)
    ]
    assert len(_buckets(errors)) == 1


def test_node_names_do_not_split_a_bug() -> None:
    errors = [_fails_with(f"two leaders: n{a} and n{b}") for a, b in [(1, 2), (3, 1), (2, 5)]]
    assert len(_buckets(errors)) == 1
    # The world's own names, whatever they look like, are masked when known.
    assert mask_message("alice holds the lock", ("alice", "bob")) == mask_message(
        "bob holds the lock", ("alice", "bob")
    )


def test_dict_and_set_order_do_not_split_a_bug() -> None:
    one = _fails_with(str({"n1": 3, "n2": 4}))
    other = _fails_with(str({"n2": 4, "n1": 3}))
    third = _fails_with(str({"x-17", "y-3"}))
    fourth = _fails_with(str({"y-3", "x-17"}))
    assert len(_buckets([one, other])) == 1 and len(_buckets([third, fourth])) == 1


def test_a_message_listing_request_ids_is_one_failure_for_the_shrinker() -> None:
    long = _fails_with(f"duplicate writes: {['req-3', 'req-17', 'req-40']}", seed=1)
    short = _fails_with(f"duplicate writes: {['req-5']}", seed=2)
    assert len(_buckets([long, short])) == 1
    first, second = failure_of(long), failure_of(short)
    assert first is not None and second is not None and first["bucket"] == second["bucket"]


def test_two_raise_sites_stay_two_buckets() -> None:
    here, there = _fails_with("balance went negative"), _fails_elsewhere("balance went negative")
    buckets = _buckets([here, there])
    assert len(buckets) == 2
    assert all("test_failure_identity.py:" in bucket for bucket in buckets)


def test_an_always_claim_is_named_with_where_it_was_called() -> None:
    async def main() -> None:
        seedbed.always(False, "replicas agree", node="n3", entry={"a": 1, "b": 2})

    try:
        seedbed.run(main, seed=3)
    except seedbed.SimulationFailure as exc:
        bucket = describe_error(exc)["bucket"]
    assert bucket.startswith("InvariantViolation: replicas agree (at tests/sweep/")


def _old(seed: int, message: str, bucket: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": "seed", "seed": seed, "status": "fail", "error_type": "AssertionError",
        "message": message, "replay": f"seedbed run x:y --seed {seed}", "wall_time": 0.1,
    }  # fmt: skip
    if bucket is not None:
        record["bucket"] = bucket
    return record


def test_records_written_before_identities_still_get_a_bucket() -> None:
    without = _old(1, "balance went negative: 12", None)
    assert record_identity(without) == "AssertionError: balance went negative: <n>"
    kept = _old(2, "balance went negative: 5", "AssertionError: balance went negative: <n>")
    assert record_identity(kept) == kept["bucket"]
    summary = summarize([without, kept])
    assert [(b.name, b.count) for b in summary.buckets] == [
        ("AssertionError: balance went negative: <n>", 2)
    ]
    aggregate = Aggregate(Path("results.jsonl"))
    for record in (without, kept):
        aggregate.add_seed(record)
    assert {name: b.count for name, b in aggregate.buckets.items()} == {
        "AssertionError: balance went negative: <n>": 2
    }


def _named_world(sim: Simulation) -> None:
    """Two clients with names that look like nothing; a drawn one fails."""
    loser = random.choice(["alice", "bob"])

    def client(me: str) -> Any:
        async def main() -> None:
            await asyncio.sleep(0.1)
            if me == loser:
                raise AssertionError(f"{me} read a stale value")

        return main

    for name in ("alice", "bob"):
        sim.client(name, client(name))


named = Scenario("named", _named_world, duration=1.0)


def test_the_worlds_own_names_are_masked_in_a_scenario() -> None:
    records = []
    for seed in range(12):
        outcome = run_target(named, seed, last_events=False)
        records.append(build(seed, outcome.replay, outcome, 0.1))
    messages = {record["message"].split(":")[-1] for record in records}
    assert len(messages) == 2  # both clients failed in some seed...
    assert len({record["bucket"] for record in records}) == 1  # ...as one bug
