"""asyncio paths that iterate a set of awaitables follow creation order inside a run.

Address order is what the allocator leaves behind, so the same seed run many
times in one process shows it: each test runs its program 30 times and wants
one outcome, and the outcome asyncio's own argument order implies.
"""

from __future__ import annotations

import asyncio
import sys
from asyncio import as_completed as copied_as_completed
from typing import Any

import pytest

import seedbed


async def _work(index: int) -> int:
    await asyncio.sleep(0)
    return index


def _outcomes(main: Any, runs: int = 30) -> set[Any]:
    """The outcomes of `runs` runs of one seed, with task-order exploration off
    (its seeded order would hide the creation order these tests look for)
    and, in every fifth run, on: one seed still has one outcome."""
    garbage = []  # keep the heap changing between runs, as a long sweep does
    outcomes, explored = set(), set()
    for run in range(runs):
        garbage.append([object() for _ in range(run * 7)])
        outcomes.add(repr(seedbed.run(main, seed=0, explore_tasks=False).value))
        if run % 5 == 0:
            explored.add(repr(seedbed.run(main, seed=0).value))
    assert len(explored) == 1, f"one seed, several outcomes: {explored}"
    return outcomes


def test_as_completed_creates_its_tasks_in_argument_order() -> None:
    async def main() -> list[int]:
        return [await f for f in asyncio.as_completed([_work(i) for i in range(8)])]

    assert _outcomes(main) == {repr(list(range(8)))}


def test_a_module_level_copy_of_as_completed_is_ordered_too() -> None:
    async def main() -> list[int]:
        return [await f for f in copied_as_completed([_work(i) for i in range(8)])]

    assert _outcomes(main) == {repr(list(range(8)))}


@pytest.mark.skipif(sys.version_info < (3, 13), reason="async for over as_completed is 3.13+")
def test_async_for_over_as_completed_is_ordered_and_yields_the_tasks_it_made() -> None:
    async def main() -> list[int]:
        order = []
        async for task in asyncio.as_completed([_work(i) for i in range(8)]):  # type: ignore[attr-defined]
            assert isinstance(task, asyncio.Task)
            order.append(task.result())
        return order

    assert _outcomes(main) == {repr(list(range(8)))}


def test_as_completed_keeps_the_stdlib_behaviour_for_futures_timeouts_and_bad_input() -> None:
    async def main() -> tuple[list[int], str]:
        tasks = [asyncio.ensure_future(_work(i)) for i in range(3)]
        done = [await f for f in asyncio.as_completed([*tasks, tasks[0]])]  # duplicate dropped
        slow = asyncio.ensure_future(asyncio.sleep(10))
        try:
            for f in asyncio.as_completed([slow], timeout=1):
                await f
        except TimeoutError:
            outcome = "timed out"
        slow.cancel()
        coro = asyncio.sleep(0)
        try:
            asyncio.as_completed(coro)  # type: ignore[arg-type]
        except TypeError as exc:
            assert "an iterable" in str(exc)
        finally:
            coro.close()
        return done, outcome

    assert seedbed.run(main, seed=1, explore_tasks=False).value == ([0, 1, 2], "timed out")


def test_outside_a_run_as_completed_is_the_stdlib_function() -> None:
    async def main() -> list[int]:
        return sorted([await f for f in asyncio.as_completed([_work(i) for i in range(4)])])

    assert asyncio.as_completed is asyncio.tasks.as_completed
    assert asyncio.run(main()) == [0, 1, 2, 3]


def test_wait_returns_task_sets_that_iterate_in_creation_order() -> None:
    async def main() -> list[int]:
        tasks = [asyncio.create_task(_work(i)) for i in range(20)]
        done, _ = await asyncio.wait(tasks)
        return [task.result() for task in done]

    assert _outcomes(main) == {repr(list(range(20)))}


def test_a_failing_taskgroup_cancels_its_other_children_in_creation_order() -> None:
    async def main() -> list[int]:
        cancelled: list[int] = []

        async def child(index: int) -> None:
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                cancelled.append(index)
                raise

        async def failing() -> None:
            await asyncio.sleep(1)
            raise ValueError("boom")

        try:
            async with asyncio.TaskGroup() as group:
                for index in range(12):
                    group.create_task(child(index))
                group.create_task(failing())
        except ExceptionGroup:
            pass
        return cancelled

    assert _outcomes(main) == {repr(list(range(12)))}


def test_a_wait_on_plain_futures_puts_their_address_order_in_the_hash() -> None:
    # Plain futures hash by address on 3.12+: the order `done` iterates in may
    # vary between runs, but never under one trace hash. On 3.11 the loop's
    # futures hash by number (SimFuture): the order never moves.
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(12)]
        for index, future in enumerate(futures):
            loop.call_soon(future.set_result, index)
        done, _ = await asyncio.wait(futures)
        return [f.result() for f in done]

    garbage = []
    seen: dict[str, set[tuple[int, ...]]] = {}
    for run in range(30):
        garbage.append([object() for _ in range(run * 7)])
        result = seedbed.run(main, seed=0)
        seen.setdefault(result.trace_hash, set()).add(tuple(result.value))
    assert all(len(results) == 1 for results in seen.values()), seen
    if sys.version_info < (3, 12):
        assert list(seen.values()) == [{tuple(range(12))}]  # in the order first hashed
    else:
        assert len(seen) > 1  # the order did move, and the hash with it


def test_a_wait_on_the_loops_tasks_alone_adds_no_event(tmp_path: Any) -> None:
    async def main() -> None:
        await asyncio.wait([asyncio.create_task(_work(i)) for i in range(3)])

    path = tmp_path / "run.jsonl"
    seedbed.run(main, seed=0, trace=path)
    assert "set order" not in path.read_text()
