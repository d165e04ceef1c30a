"""kvstore in the simulator: the production code, unchanged, under seeded faults."""

from __future__ import annotations

import pytest

from examples.kvstore import simulate

SHORT = simulate.Plan(duration=5.0, min_ok=10)


def test_the_happy_path_commits_and_checks_out() -> None:
    result = simulate.run(1, plan=SHORT)
    assert result.values["checker"] > 100  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_crashes_and_partitions_lose_no_acknowledged_write(seed: int) -> None:
    faults = simulate.Faults(crashes=True, partitions=True, interval=0.7)
    result = simulate.run(seed, faults, SHORT)
    assert result.values["nemesis"] > 0  # type: ignore[attr-defined]


def test_a_run_is_a_function_of_its_seed() -> None:
    faults = simulate.Faults(crashes=True)
    first, second = simulate.run(5, faults, SHORT), simulate.run(5, faults, SHORT)
    assert first.trace_hash == second.trace_hash  # type: ignore[attr-defined]
