"""What seedbed promises beyond asyncio: async generators close in their owner's context,
and the stdlib's own TaskGroup cancel-count leak is not blamed on user code.

Stock asyncio finalizes an async generator in whatever context is current when
the garbage collector reaches it (or, at shutdown, in the runner's context);
seedbed records the context of the task that started iterating it, so a
generator that belongs to one node never runs its `finally` as another node.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import warnings
from collections.abc import AsyncIterator
from typing import Any

import seedbed

OWNER: contextvars.ContextVar[str] = contextvars.ContextVar("owner", default="unset")


async def _ticks(log: list[str]) -> AsyncIterator[int]:
    try:
        for i in range(10):
            await asyncio.sleep(0.001)
            yield i
    finally:
        log.append(OWNER.get())


def test_an_async_generator_dropped_by_another_task_is_finalized_in_its_owners_context(
    seedbed_run: Any,
) -> None:
    """CPython clears an async generator's weak references before it calls the
    finalizer hook, so an owner recorded in a WeakKeyDictionary would be lost
    here and the `finally` would run as the dropper (as on stock asyncio).
    """
    log: list[str] = []

    async def main() -> None:
        box: list[AsyncIterator[int]] = []

        async def owner() -> None:
            OWNER.set("owner")
            ticks = _ticks(log)
            box.append(ticks)
            await anext(ticks)

        async def dropper() -> None:
            OWNER.set("dropper")
            box.clear()  # the last reference goes here
            await asyncio.sleep(0.01)

        await asyncio.create_task(owner())
        await asyncio.create_task(dropper())

    seedbed_run(main)
    assert log == ["owner"]


def test_an_async_generator_collected_by_gc_in_another_task_is_finalized_in_its_owners_context(
    seedbed_run: Any,
) -> None:
    """The cycle collector runs the finalizer hook inside whichever task called it."""
    log: list[str] = []

    async def main() -> None:
        async def owner() -> None:
            OWNER.set("owner")
            ticks = _ticks(log)
            await anext(ticks)
            cycle: dict[str, Any] = {"ticks": ticks}
            cycle["self"] = cycle  # only the cycle collector frees it

        async def collector() -> None:
            OWNER.set("collector")
            gc.collect()
            await asyncio.sleep(0.01)

        await asyncio.create_task(owner())
        await asyncio.create_task(collector())

    seedbed_run(main)
    assert log == ["owner"]


def test_an_async_generator_left_open_at_the_end_is_finalized_in_its_owners_context(
    seedbed_run: Any,
) -> None:
    """Stock asyncio closes it in the runner's context at shutdown: a seedbed promise."""
    log: list[str] = []
    kept: list[AsyncIterator[int]] = []

    async def main() -> None:
        async def owner() -> None:
            OWNER.set("owner")
            ticks = _ticks(log)
            kept.append(ticks)
            await anext(ticks)

        await asyncio.create_task(owner())

    seedbed_run(main)
    assert log == ["owner"]


def test_catching_a_task_groups_exception_group_is_not_a_swallowed_cancellation() -> None:
    """On CPython without the gh-116720 fix (3.11.7 and 3.12.1 here; fixed in
    3.13.0), a child failing while the parent waits in `TaskGroup.__aexit__`
    makes the group cancel the parent and never uncancel it: the stdlib leaks
    `cancelling() == 1`, on the stock loop too. That must not fail a strict
    run (`CancellationSwallowed`) or warn: the user's code did nothing wrong.
    """

    async def main() -> str:
        async def fail() -> None:
            await asyncio.sleep(0.01)
            raise ValueError("boom")

        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(fail())
        except ExceptionGroup:
            return "handled"
        return "not raised"

    for seed in range(3):
        assert seedbed.run(main, seed=seed, strict=True).value == "handled"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert seedbed.run(main, seed=seed).value == "handled"
        assert not [w for w in caught if "cancellation" in str(w.message)]
