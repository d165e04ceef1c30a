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
_OPTIONS: dict[str, object] = (
    {"explore_tasks": True} if os.environ.get("SEEDBED_SUITE_EXPLORE") == "1" else {}
)
# SEEDBED_SUITE_THREADS=inline (or lanes): the loops' `threads` option.
if os.environ.get("SEEDBED_SUITE_THREADS"):
    _OPTIONS["threads"] = os.environ["SEEDBED_SUITE_THREADS"]
# SEEDBED_SUITE_STOCK=1: stock asyncio's loops instead, to measure what passes without us.
_STOCK = os.environ.get("SEEDBED_SUITE_STOCK") == "1"


def _new_loop() -> SeedbedLoop:
    loop = seedbed.new_event_loop(seed=_SEED, **_OPTIONS)
    _loops.append(loop)
    return loop


def _stock_loop() -> asyncio.AbstractEventLoop:
    return asyncio.new_event_loop()


class _CountingPolicy(seedbed.EventLoopPolicy):
    """seedbed's policy, counting its loops like the factory above."""

    def new_event_loop(self) -> SeedbedLoop:
        loop = super().new_event_loop()
        _loops.append(loop)
        return loop


if os.environ.get("SEEDBED_SUITE_POLICY") == "1" and not _STOCK:
    # For suites that make their loops without pytest-asyncio (anyio's pytest
    # plugin, unittest's IsolatedAsyncioTestCase, asyncio.new_event_loop()):
    # the policy is the other line a user adds.
    asyncio.set_event_loop_policy(_CountingPolicy(seed=_SEED, **_OPTIONS))


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    return {"seedbed": _stock_loop if _STOCK else _new_loop}  # one name: the same test ids


def _steps() -> int:
    """Steps all seedbed loops have taken so far (a loop may be reused across tests)."""
    return sum(loop._st.steps for loop in list(_loops))


_ran: list[str] = []  # tests during which a seedbed loop took a step


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    before = _steps()
    try:
        return (yield)
    finally:
        if _steps() > before:
            _ran.append(item.nodeid)


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
    ran = os.environ.get("SEEDBED_SUITE_RAN")  # the tests that ran on a seedbed loop
    if ran:
        with open(ran, "w", encoding="utf-8") as out:
            out.write("".join(f"{nodeid}\n" for nodeid in _ran))
