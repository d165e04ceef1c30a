"""Faking the clock by patching loop.time is refused where it happens, saying what to do."""

from __future__ import annotations

import asyncio
from unittest import mock

import pytest

import seedbed
from seedbed.errors import UsageError


def test_patching_loop_time_inside_a_test_is_refused_with_how_to_advance_time() -> None:
    fired: list[float] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(10, fired.append, 10.0)
        with mock.patch.object(loop, "time", return_value=loop.time() + 60):
            await asyncio.sleep(0)

    loop = seedbed.new_event_loop(seed=1)
    try:
        with pytest.raises(UsageError, match=r"await asyncio\.sleep\(seconds\)"):
            loop.run_until_complete(main())
    finally:
        loop.close()
    assert fired == []


def test_assigning_loop_time_is_refused_and_the_loop_keeps_its_clock() -> None:
    loop = seedbed.new_event_loop(seed=1)
    with pytest.raises(UsageError, match=r"loop\.time cannot be patched"):
        loop.time = lambda: 1e9  # type: ignore[method-assign]
    assert loop.time() == 0.0
    loop.set_debug(True)  # other attributes are set as before
    loop.close()


def test_the_documented_way_advances_virtual_time() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(60)
        return loop.time() - start

    assert seedbed.run(main, seed=1).value == pytest.approx(60, abs=2e-3)  # the 1 ms clock tick
