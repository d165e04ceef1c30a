"""Put another project's pytest-asyncio suite on seedbed's loop.

Copied as `conftest.py` into the root of an unpacked sdist by
`tests/suites/_suites.py`: pytest-asyncio (1.4 and later) asks the
`pytest_asyncio_loop_factories` hook for its loops, so every async test and
async fixture of the suite runs on a `SeedbedLoop`; a suite that makes its
loops otherwise (anyio's plugin, `IsolatedAsyncioTestCase`) gets them from
seedbed's event loop policy instead.
This is the whole of what a user adds to their own suite (see the README).
Each loop handed out is counted, so the tier can check that the suite really
ran on seedbed's loop and not on a default one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping

import pytest

import seedbed
from seedbed.aio.loop import SeedbedLoop

_loops: list[SeedbedLoop] = []


_SEED = int(os.environ.get("SEEDBED_SUITE_SEED", "1"))
# SEEDBED_SUITE_EXPLORE=1: task-order exploration on, to check a suite passes with it.
_OPTIONS = {"explore_tasks": True} if os.environ.get("SEEDBED_SUITE_EXPLORE") == "1" else {}


def _new_loop() -> SeedbedLoop:
    loop = seedbed.new_event_loop(seed=_SEED, **_OPTIONS)
    _loops.append(loop)
    return loop


class _CountingPolicy(seedbed.EventLoopPolicy):
    """seedbed's policy, counting its loops like the factory above."""

    def new_event_loop(self) -> SeedbedLoop:
        loop = super().new_event_loop()
        _loops.append(loop)
        return loop


if os.environ.get("SEEDBED_SUITE_POLICY") == "1":
    # For suites that make their loops without pytest-asyncio (anyio's pytest
    # plugin, unittest's IsolatedAsyncioTestCase, asyncio.new_event_loop()):
    # the policy is the other line a user adds.
    asyncio.set_event_loop_policy(_CountingPolicy(seed=_SEED, **_OPTIONS))


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], SeedbedLoop]]:
    return {"seedbed": _new_loop}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the tests the tier excludes: exact ids (with all their parameters).

    (`--deselect` matches prefixes, so excluding `test_acquire` would also
    drop `test_acquire_wait_time`.)
    """
    excluded = set(filter(None, os.environ.get("SEEDBED_SUITE_EXCLUDE", "").split("\n")))
    if not excluded:
        return
    only = os.environ.get("SEEDBED_SUITE_ONLY_EXCLUDED") == "1"  # run just those instead
    dropped = [item for item in items if (item.nodeid.split("[")[0] in excluded) != only]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


def pytest_sessionfinish(session: pytest.Session) -> None:
    report = os.environ.get("SEEDBED_SUITE_LOOPS")
    if report:
        with open(report, "w", encoding="utf-8") as out:
            out.write(f"{len(_loops)}\n")
