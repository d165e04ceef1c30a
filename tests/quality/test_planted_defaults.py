"""Quality: planted bugs of every kind in issue 24's table are found with the defaults.

Each system of `tests.quality.planted` (plain asyncio, or a small world)
comes in a buggy and a correct variant. With seedbed's defaults and no
exploration option (see `planted._defaults`), the buggy variant must fail in
one of the first `FOUND_WITHIN` seeds and the correct one must pass
`CORRECT_SEEDS` seeds: a correct program never fails for an order or a
timing real asyncio could not produce. `bench/strategies.py` measures the
runs to the first failure over several seed windows; this asserts the bar.
"""

from __future__ import annotations

import pytest
from tests.quality.planted import SYSTEMS

FOUND_WITHIN = 20
CORRECT_SEEDS = 200


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_the_planted_bug_is_found_with_the_defaults(name: str) -> None:
    kind, run = SYSTEMS[name]
    failures = (run(seed, True) for seed in range(FOUND_WITHIN))
    found = next((failure for failure in failures if failure is not None), None)
    assert found is not None, f"{kind}: not found in {FOUND_WITHIN} seeds with the defaults"


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_the_correct_variant_passes_with_the_defaults(name: str) -> None:
    kind, run = SYSTEMS[name]
    for seed in range(CORRECT_SEEDS):
        failure = run(seed, False)
        assert failure is None, f"{kind}, correct variant, seed {seed}: {failure}"
