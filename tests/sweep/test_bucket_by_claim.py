"""A failed `always` claim groups by its message, whatever details each seed shows."""

from __future__ import annotations

import seedbed
from seedbed._harness.sweeps._record import describe_error


def _failure_with(detail: int) -> BaseException:
    async def main() -> None:
        seedbed.always(False, "replicas agree at an index", node=f"n{detail}", entry=f"x{detail}")

    try:
        seedbed.run(main, seed=detail)
    except seedbed.SimulationFailure as exc:
        return exc
    raise AssertionError("the run did not fail")


def test_failures_of_one_claim_share_a_bucket_whatever_their_details() -> None:
    first, second = describe_error(_failure_with(1)), describe_error(_failure_with(2))
    claim = "InvariantViolation: replicas agree at an index (at tests/sweep/test_bucket_by_claim"
    assert first["bucket"] == second["bucket"] and first["bucket"].startswith(claim)
    assert "node='n1'" in first["message"] and "node='n2'" in second["message"]


def test_an_unreachable_line_buckets_by_its_message() -> None:
    async def main() -> None:
        seedbed.unreachable("the fallback path")

    try:
        seedbed.run(main, seed=3)
    except seedbed.SimulationFailure as exc:
        bucket = describe_error(exc)["bucket"]
    assert bucket.startswith(
        "InvariantViolation: unreachable code was reached: the fallback path (at tests/sweep/"
    )
