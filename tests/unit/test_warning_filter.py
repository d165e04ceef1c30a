"""A suite under `filterwarnings = error` opts out of seedbed's own warning by name
(issue 42, item 9): `ignore::seedbed.SeedbedWarning` names the category, so a
task that swallows its cancellation (stock asyncio says nothing) still passes."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from _pytest.config import parse_warning_filter

import seedbed


async def _swallows() -> str:
    async def stubborn() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(1)  # carries on: seedbed warns, stock says nothing

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(2)
    return "done"


def test_the_warning_is_a_category_a_suite_filters_by_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.warns(seedbed.SeedbedWarning, match="caught its cancellation"):
        seedbed.run(_swallows, seed=1)
    action, _, category, _, _ = parse_warning_filter("ignore::seedbed.SeedbedWarning", escape=False)
    assert (action, category) == ("ignore", seedbed.SeedbedWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings(action, category=category)
        assert seedbed.run(_swallows, seed=1).value == "done"
    assert not [r for r in caplog.records if r.levelname == "ERROR"]  # nothing raised inside
