"""Async generators (iteration and finalization) and contextvars."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from typing import Any

REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="unset")


async def _ticks(n: int, log: list[str]) -> AsyncIterator[int]:
    try:
        for i in range(n):
            await asyncio.sleep(0.001)
            yield i
    finally:
        log.append(f"finally request={REQUEST.get()}")


def test_async_for_iterates_an_async_generator_to_the_end(run: Any) -> None:
    async def main() -> tuple[list[int], list[str]]:
        log: list[str] = []
        return [i async for i in _ticks(5, log)], log

    assert run(main) == ([0, 1, 2, 3, 4], ["finally request=unset"])


def test_an_abandoned_async_generator_is_finalized_by_the_end_of_the_run(run: Any) -> None:
    log: list[str] = []
    kept: list[AsyncIterator[int]] = []  # alive after main returns: only the runner closes it

    async def main() -> list[str]:
        ticks = _ticks(10, log)
        kept.append(ticks)
        async for i in ticks:
            if i == 2:
                break
        return list(log)

    assert run(main) == []  # not finalized while main runs: it is still referenced
    assert log == ["finally request=unset"]


def test_a_dropped_async_generator_is_finalized_in_the_iterating_tasks_context(
    run: Any,
) -> None:
    async def main() -> tuple[list[str], str]:
        log: list[str] = []

        async def handler() -> None:
            REQUEST.set("r-17")
            ticks = _ticks(10, log)
            async for i in ticks:
                if i == 1:
                    break
            del ticks  # the last reference: the loop's finalizer hook closes it
            await asyncio.sleep(0.01)

        await asyncio.create_task(handler())
        await asyncio.sleep(0.01)
        return log, REQUEST.get()

    assert run(main) == (["finally request=r-17"], "unset")


def test_a_task_sees_context_values_set_before_it_was_created(run: Any) -> None:
    async def main() -> tuple[str, str]:
        REQUEST.set("outer")

        async def child() -> str:
            return REQUEST.get()

        task = asyncio.create_task(child())
        REQUEST.set("changed after creation")  # the task holds a copy
        return await task, REQUEST.get()

    assert run(main) == ("outer", "changed after creation")


def test_context_changes_inside_a_task_do_not_leak_back(run: Any) -> None:
    async def main() -> list[str]:
        REQUEST.set("parent")
        seen: list[str] = []

        async def child(name: str) -> None:
            REQUEST.set(name)
            await asyncio.sleep(0.001)
            seen.append(REQUEST.get())

        await asyncio.gather(child("a"), child("b"))
        return [*sorted(seen), REQUEST.get()]

    assert run(main) == ["a", "b", "parent"]


def test_call_soon_with_a_context_runs_the_callback_in_that_context(run: Any) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        seen: list[str] = []
        ctx = contextvars.copy_context()
        ctx.run(REQUEST.set, "in-ctx")

        def callback(tag: str) -> None:
            seen.append(f"{tag}:{REQUEST.get()}")
            REQUEST.set("set by callback")

        loop.call_soon(callback, "soon", context=ctx)
        loop.call_later(0.001, callback, "later", context=ctx)
        await asyncio.sleep(0.01)
        seen.append(f"caller:{REQUEST.get()}")
        seen.append(f"ctx:{ctx[REQUEST]}")
        return seen

    assert run(main) == [
        "soon:in-ctx",
        "later:set by callback",
        "caller:unset",
        "ctx:set by callback",
    ]


def test_call_soon_without_a_context_runs_in_a_copy_of_the_callers_context(run: Any) -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        seen: list[str] = []
        REQUEST.set("caller")

        def callback() -> None:
            seen.append(REQUEST.get())
            REQUEST.set("callback")

        loop.call_soon(callback)
        REQUEST.set("caller, later")  # the copy was taken at call_soon
        await asyncio.sleep(0)
        seen.append(REQUEST.get())
        return seen

    assert run(main) == ["caller", "caller, later"]


def test_create_task_with_an_explicit_context_runs_the_task_in_it(run: Any) -> None:
    async def main() -> tuple[str, str]:
        ctx = contextvars.copy_context()
        ctx.run(REQUEST.set, "given")

        async def child() -> str:
            value = REQUEST.get()
            REQUEST.set("child")
            return value

        value = await asyncio.get_running_loop().create_task(child(), context=ctx)
        return value, ctx[REQUEST]

    assert run(main) == ("given", "child")
