"""TaskGroup, gather, shield, wait and as_completed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


async def _after(delay: float, value: Any) -> Any:
    await asyncio.sleep(delay)
    return value


async def _fail_after(delay: float, exc: BaseException) -> None:
    await asyncio.sleep(delay)
    raise exc


def test_a_failing_task_group_child_cancels_its_siblings_and_raises_an_exception_group(
    run: Any,
) -> None:
    async def main() -> tuple[list[str], list[type[BaseException]], list[bool]]:
        events: list[str] = []

        async def sibling(name: str) -> None:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                events.append(f"{name} cancelled")
                raise

        caught: list[type[BaseException]] = []
        try:
            async with asyncio.TaskGroup() as tg:
                a = tg.create_task(sibling("a"))
                b = tg.create_task(sibling("b"))
                tg.create_task(_fail_after(0.01, ValueError("boom")))
        except ExceptionGroup as group:
            caught = [type(exc) for exc in group.exceptions]
        return sorted(events), caught, [a.cancelled(), b.cancelled()]

    assert run(main) == (["a cancelled", "b cancelled"], [ValueError], [True, True])


def test_a_task_group_waits_for_all_children_and_keeps_their_results(run: Any) -> None:
    async def main() -> list[Any]:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(_after(d, d)) for d in (0.02, 0.01, 0.03)]
        return [task.result() for task in tasks]

    assert run(main) == [0.02, 0.01, 0.03]


def test_gather_with_return_exceptions_returns_results_and_errors_in_argument_order(
    run: Any,
) -> None:
    async def main() -> list[Any]:
        cancelled = asyncio.create_task(_after(1, "never"))
        cancelled_soon = asyncio.get_running_loop().call_later(0.005, cancelled.cancel)
        results = await asyncio.gather(
            _after(0.03, "slow"),
            _fail_after(0.01, ValueError("bad")),
            _after(0.02, "fast"),
            cancelled,
            return_exceptions=True,
        )
        cancelled_soon.cancel()
        return [type(r).__name__ if isinstance(r, BaseException) else r for r in results]

    assert run(main) == ["slow", "ValueError", "fast", "CancelledError"]


def test_gather_without_return_exceptions_raises_the_first_error(run: Any) -> None:
    async def main() -> tuple[str, bool]:
        slow = asyncio.create_task(_after(0.05, "slow"))
        with pytest.raises(ValueError) as info:
            await asyncio.gather(slow, _fail_after(0.002, ValueError("first")))
        still_running = not slow.done()  # gather does not cancel the others
        await slow
        return str(info.value), still_running

    assert run(main) == ("first", True)


def test_shield_keeps_the_inner_task_running_when_the_outer_is_cancelled(run: Any) -> None:
    async def main() -> tuple[bool, bool, str]:
        inner = asyncio.create_task(_after(0.05, "done"))

        async def outer() -> Any:
            return await asyncio.shield(inner)

        waiting = asyncio.create_task(outer())
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # outer is now waiting on the shield
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return waiting.cancelled(), inner.done(), await inner

    assert run(main) == (True, False, "done")


def test_wait_first_completed_returns_once_one_task_is_done(run: Any) -> None:
    async def main() -> tuple[list[Any], list[Any]]:
        tasks = [asyncio.create_task(_after(d, d)) for d in (0.05, 0.002, 0.04)]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        result = sorted(t.result() for t in done), sorted(tasks.index(t) for t in pending)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return result

    assert run(main) == ([0.002], [0, 2])


def test_wait_all_completed_returns_every_task_done(run: Any) -> None:
    async def main() -> tuple[list[Any], int]:
        tasks = [asyncio.create_task(_after(d, d)) for d in (0.03, 0.01, 0.02)]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.ALL_COMPLETED)
        return sorted(t.result() for t in done), len(pending)

    assert run(main) == ([0.01, 0.02, 0.03], 0)


def test_wait_first_exception_returns_at_the_first_failure(run: Any) -> None:
    async def main() -> tuple[list[int], list[int]]:
        tasks = [
            asyncio.create_task(_after(0.001, "ok")),
            asyncio.create_task(_fail_after(0.002, ValueError())),
            asyncio.create_task(_after(0.05, "late")),
        ]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        result = sorted(tasks.index(t) for t in done), sorted(tasks.index(t) for t in pending)
        await asyncio.gather(*tasks, return_exceptions=True)
        return result

    assert run(main) == ([0, 1], [2])


def test_wait_with_a_timeout_splits_done_from_pending(run: Any) -> None:
    async def main() -> tuple[list[int], list[int]]:
        tasks = [asyncio.create_task(_after(d, d)) for d in (0.05, 0.001, 0.05)]
        done, pending = await asyncio.wait(tasks, timeout=0.01)
        result = sorted(tasks.index(t) for t in done), sorted(tasks.index(t) for t in pending)
        await asyncio.gather(*tasks)
        return result

    assert run(main) == ([1], [0, 2])


def test_as_completed_yields_in_completion_order(run: Any) -> None:
    async def main() -> list[Any]:
        delays = (0.03, 0.01, 0.04, 0.02)
        return [
            await next_done for next_done in asyncio.as_completed([_after(d, d) for d in delays])
        ]

    assert run(main) == [0.01, 0.02, 0.03, 0.04]
