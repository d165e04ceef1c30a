"""Every task on a seedbed loop is the loop's own, whatever made it.

`loop.create_task`, `asyncio.Task(...)` called directly (eagerly or not) and
the stdlib's eager task factory all give a task numbered by the loop, hashed
by that number, named from the loop's counter, traced, and buried with its
node.
"""

from __future__ import annotations

import asyncio
import sys
from asyncio import Task as CopiedTask
from typing import Any

import pytest

import seedbed
from seedbed.aio._handles import SimTask

EAGER = sys.version_info >= (3, 12)
needs_eager = pytest.mark.skipif(not EAGER, reason="eager tasks are new in 3.12")


async def _nap(index: int) -> int:
    await asyncio.sleep(0.001 * (index % 3))
    return index


def _is_the_loops(task: asyncio.Task[Any]) -> bool:
    return type(task) is SimTask and hash(task) == task.number


def test_a_task_made_by_the_class_itself_is_the_loops_own() -> None:
    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        made = [
            asyncio.Task(_nap(0), loop=loop),
            asyncio.Task(_nap(1)),  # the running loop
            CopiedTask(_nap(2)),  # a copy made at import, before any run
        ]
        assert all(isinstance(task, asyncio.Task) for task in made)
        await asyncio.gather(*made)
        return [(_is_the_loops(task), task.get_name()) for task in made]

    # Task-1 is main itself: the names come from the loop's own counter.
    assert seedbed.run(main, seed=0).value == [(True, "Task-2"), (True, "Task-3"), (True, "Task-4")]
    assert asyncio.Task is CopiedTask and type(asyncio.Task) is type  # restored after the run


@needs_eager
def test_an_eager_task_runs_at_once_and_is_the_loops_own() -> None:
    async def main() -> list[Any]:
        steps: list[str] = []

        async def first_step() -> None:
            steps.append("ran")
            await asyncio.sleep(0)

        task = asyncio.Task(first_step(), eager_start=True)  # type: ignore[call-arg]
        steps.append("created")
        await task
        return [steps, _is_the_loops(task), task.get_name()]

    assert seedbed.run(main, seed=0).value == [["ran", "created"], True, "Task-2"]


@needs_eager
def test_the_stdlib_eager_task_factory_makes_the_loops_tasks() -> None:
    async def main() -> list[bool]:
        loop = asyncio.get_running_loop()
        loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined]
        tasks = [loop.create_task(_nap(i)) for i in range(4)]
        tasks.append(asyncio.ensure_future(_nap(4)))
        await asyncio.wait(tasks)
        return [_is_the_loops(task) for task in tasks]

    assert seedbed.run(main, seed=0).value == [True] * 5


def test_the_tasks_asyncio_wait_returns_iterate_in_creation_order() -> None:
    async def main() -> tuple[list[int], list[int]]:
        loop = asyncio.get_running_loop()
        tasks = [asyncio.Task(_nap(i), loop=loop) for i in range(20)]
        done, pending = await asyncio.wait(tasks, timeout=0.0015)
        for task in pending:
            task.cancel()
        return [t.result() for t in done], [tasks.index(t) for t in pending]

    garbage = []
    outcomes = set()
    for run in range(10):  # the heap changes between runs: address order would show
        garbage.append([object() for _ in range(run * 13)])
        done, pending = seedbed.run(main, seed=0).value
        outcomes.add((tuple(done), tuple(pending)))
    assert outcomes == {(tuple(i for i in range(20) if i % 3 < 2), tuple(range(2, 20, 3)))}


def test_an_empty_name_stays_empty_as_in_stock_asyncio() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(_nap(0), name=""),
            asyncio.create_task(_nap(1), name=""),
            asyncio.Task(_nap(2), name=""),
            loop.create_task(_nap(3)),
        ]
        await asyncio.gather(*tasks)
        return [task.get_name() for task in tasks]

    assert seedbed.run(main, seed=0).value == ["", "", "", "Task-5"]


async def _names() -> list[str]:
    """Default names of tasks made every way this interpreter offers."""
    loop = asyncio.get_running_loop()
    tasks = [asyncio.create_task(_nap(0)), asyncio.Task(_nap(1), loop=loop)]
    if EAGER:
        tasks.append(asyncio.Task(_nap(2), loop=loop, eager_start=True))  # type: ignore[call-arg]
        loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined]
        tasks.append(loop.create_task(_nap(3)))
    await asyncio.gather(*tasks)
    return [task.get_name() for task in tasks]


def test_a_seeds_task_names_do_not_depend_on_the_runs_before_it() -> None:
    alone = seedbed.run(_names, seed=3)
    for seed in range(3):
        seedbed.run(_names, seed=seed)

    async def stock() -> None:  # advances asyncio's process-wide name counter
        await asyncio.gather(*(asyncio.Task(_nap(0)) for _ in range(5)))

    asyncio.run(stock())
    after = seedbed.run(_names, seed=3)
    assert after.value == alone.value
    assert (after.trace_hash, after.result_digest) == (alone.trace_hash, alone.result_digest)
    assert alone.value == [f"Task-{n}" for n in range(2, 2 + len(alone.value))]


def test_a_crash_buries_tasks_made_by_the_class_itself() -> None:
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            await asyncio.sleep(1)
            ticks.append(asyncio.get_running_loop().time())

    async def host() -> None:
        asyncio.Task(ticker())
        if EAGER:
            asyncio.Task(ticker(), eager_start=True)  # type: ignore[call-arg]
        await asyncio.Event().wait()

    async def client() -> None:
        await asyncio.sleep(3.5)
        sim.crash("h")
        await asyncio.sleep(5)

    sim = seedbed.Simulation(seed=2)
    sim.host("h", host)
    sim.client("c", client)
    sim.run(max_time=60)
    assert len(ticks) == (6 if EAGER else 3)
    assert all(t < 3.6 for t in ticks)
