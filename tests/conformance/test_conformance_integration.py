"""seedbed's loop under `asyncio.Runner` and under an event loop policy."""

from __future__ import annotations

import asyncio
import io
import time
import unittest

import seedbed

HOUR = 3600.0
WALL_BUDGET = 5.0  # seconds of real time for a test that sleeps a virtual hour


def test_a_runner_with_a_seedbed_loop_factory_runs_a_coroutine_on_virtual_time() -> None:
    async def main(tag: str) -> tuple[str, str, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(HOUR)
        return tag, type(loop).__name__, loop.time() - start

    wall = time.monotonic()
    with asyncio.Runner(loop_factory=lambda: seedbed.new_event_loop(seed=1)) as runner:
        first = runner.run(main("first"))
        second = runner.run(main("second"))  # the same loop, run again
        assert isinstance(runner.get_loop(), seedbed.SeedbedLoop)
    assert time.monotonic() - wall < WALL_BUDGET
    for (tag, loop_type, slept), expected in zip((first, second), ("first", "second"), strict=True):
        assert (tag, loop_type) == (expected, "SeedbedLoop")
        assert slept >= HOUR


def test_an_event_loop_policy_runs_an_isolated_asyncio_test_case_on_seedbed() -> None:
    seen: dict[str, object] = {}

    class OnSeedbed(unittest.IsolatedAsyncioTestCase):
        async def asyncSetUp(self) -> None:
            self.queue: asyncio.Queue[int] = asyncio.Queue()

        async def test_runs_on_seedbed_and_sleeps_an_hour_instantly(self) -> None:
            loop = asyncio.get_running_loop()
            self.assertEqual(type(loop).__name__, "SeedbedLoop")
            start = loop.time()
            await asyncio.sleep(HOUR)
            self.assertGreaterEqual(loop.time() - start, HOUR)
            seen["slept"] = loop.time() - start

        async def test_ordinary_asyncio_code_works(self) -> None:
            async def produce() -> None:
                for i in range(3):
                    await asyncio.sleep(60)
                    await self.queue.put(i)

            task = asyncio.create_task(produce())
            self.assertEqual([await self.queue.get() for _ in range(3)], [0, 1, 2])
            await task
            seen["ordinary"] = True

        async def asyncTearDown(self) -> None:
            seen.setdefault("teardowns", 0)
            seen["teardowns"] = int(str(seen["teardowns"])) + 1

    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(seedbed.EventLoopPolicy(seed=1))
    try:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(OnSeedbed)
        stream = io.StringIO()
        wall = time.monotonic()
        result = unittest.TextTestRunner(stream=stream, verbosity=2).run(suite)
        elapsed = time.monotonic() - wall
    finally:
        asyncio.set_event_loop_policy(previous)
    assert result.wasSuccessful(), stream.getvalue()
    assert result.testsRun == 2
    assert seen["ordinary"] is True and seen["teardowns"] == 2
    assert isinstance(seen["slept"], float) and seen["slept"] >= HOUR
    assert elapsed < WALL_BUDGET
    assert asyncio.get_event_loop_policy() is previous
