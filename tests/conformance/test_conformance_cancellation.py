"""Cancellation, `wait_for`, `asyncio.timeout` and `uncancel`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


def test_cancel_delivers_cancelled_error_at_the_await_and_runs_finally(run: Any) -> None:
    async def main() -> list[Any]:
        events: list[Any] = []

        async def child() -> None:
            events.append("started")
            try:
                await asyncio.sleep(1)
                events.append("not reached")
            except asyncio.CancelledError as exc:
                events.append(("cancelled", exc.args))
                raise
            finally:
                await asyncio.sleep(0)  # a finally may still await
                events.append("finally")

        task = asyncio.create_task(child())
        await asyncio.sleep(0.01)
        assert task.cancel("stop")
        assert not task.done()  # delivered at the task's next step, not now
        with pytest.raises(asyncio.CancelledError):
            await task
        events.append((task.done(), task.cancelled()))
        return events

    assert run(main) == ["started", ("cancelled", ("stop",)), "finally", (True, True)]


def test_a_task_cancelled_before_it_starts_never_runs(run: Any) -> None:
    async def main() -> tuple[list[str], bool]:
        ran: list[str] = []

        async def child() -> None:
            ran.append("ran")

        task = asyncio.create_task(child())
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return ran, task.cancelled()

    assert run(main) == ([], True)


def test_wait_for_timeout_raises_timeout_error_and_cancels_the_inner_task(run: Any) -> None:
    async def main() -> tuple[list[str], bool]:
        events: list[str] = []

        async def slow() -> str:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                events.append("inner cancelled")
                raise
            return "late"

        inner = asyncio.create_task(slow())
        try:
            await asyncio.wait_for(inner, timeout=0.01)
        except TimeoutError:
            events.append("timeout")
        return events, inner.cancelled()

    assert run(main) == (["inner cancelled", "timeout"], True)


def test_wait_for_returns_the_result_when_it_arrives_in_time(run: Any) -> None:
    async def main() -> str:
        async def quick() -> str:
            await asyncio.sleep(0.01)
            return "ok"

        return await asyncio.wait_for(quick(), timeout=0.05)

    assert run(main) == "ok"


def test_timeout_reschedule_extends_and_shortens_the_deadline(run: Any) -> None:
    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        events: list[Any] = []
        async with asyncio.timeout(0.01) as cm:
            cm.reschedule(loop.time() + 0.05)
            await asyncio.sleep(0.02)  # past the first deadline, inside the new one
        events.append(("extended", cm.expired()))

        start = loop.time()
        try:
            async with asyncio.timeout(None) as cm:
                assert cm.when() is None
                cm.reschedule(loop.time() + 0.01)
                await asyncio.sleep(1)
        except TimeoutError:
            events.append(("shortened", cm.expired(), loop.time() - start < 0.5))
        return events

    assert run(main) == [("extended", False), ("shortened", True, True)]


def test_a_timeout_expiring_inside_nested_try_finally_runs_every_finally(run: Any) -> None:
    async def main() -> list[str]:
        events: list[str] = []
        try:
            async with asyncio.timeout(0.01):
                try:
                    try:
                        await asyncio.sleep(1)
                    finally:
                        events.append("inner finally")
                        await asyncio.sleep(0)
                finally:
                    events.append("outer finally")
        except TimeoutError:
            events.append("timeout")
        return events

    assert run(main) == ["inner finally", "outer finally", "timeout"]


def test_only_the_expired_timeout_of_two_nested_ones_reports_expiry(run: Any) -> None:
    async def main() -> tuple[bool, bool, bool]:
        caught = False
        try:
            async with asyncio.timeout(0.01) as outer:
                async with asyncio.timeout(1) as inner:
                    await asyncio.sleep(1)
        except TimeoutError:
            caught = True
        return caught, outer.expired(), inner.expired()

    assert run(main) == (True, True, False)


def test_a_timeout_uncancels_the_task_so_it_can_keep_working(run: Any) -> None:
    async def main() -> list[Any]:
        task = asyncio.current_task()
        assert task is not None
        events: list[Any] = []
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.01):
                await asyncio.sleep(1)
        events.append(task.cancelling())
        await asyncio.sleep(0.01)  # not cancelled again: the timeout's cancel was undone
        events.append("slept")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.01):  # a second timeout works the same
                await asyncio.sleep(1)
        events.append(task.cancelling())
        return events

    assert run(main) == [0, "slept", 0]


def test_an_outside_cancel_inside_a_timeout_stays_a_cancellation(run: Any) -> None:
    async def main() -> tuple[bool, int, list[str]]:
        events: list[str] = []

        async def child() -> None:
            try:
                async with asyncio.timeout(1):
                    await asyncio.sleep(0.5)
            except TimeoutError:
                events.append("timeout")  # wrong: nobody's deadline passed
                raise

        task = asyncio.create_task(child())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled(), task.cancelling(), events

    assert run(main) == (True, 1, [])


def test_a_cancel_arriving_with_the_timeout_deadline_is_not_swallowed(run: Any) -> None:
    async def main() -> tuple[bool, list[str]]:
        loop = asyncio.get_running_loop()
        events: list[str] = []

        async def child() -> None:
            task = asyncio.current_task()
            assert task is not None
            try:
                async with asyncio.timeout(0.01) as cm:
                    deadline = cm.when()
                    assert deadline is not None
                    loop.call_at(deadline, task.cancel)  # same instant: either order
                    await asyncio.sleep(1)
            except TimeoutError:
                events.append("timeout")  # wrong: the outside cancel was lost
                raise

        task = asyncio.create_task(child())
        await asyncio.gather(task, return_exceptions=True)
        return task.cancelled(), events

    assert run(main) == (True, [])


def test_uncancel_returns_the_count_of_pending_cancellation_requests(run: Any) -> None:
    async def main() -> list[int]:
        counts: list[int] = []
        gate = asyncio.Event()

        async def child() -> None:
            task = asyncio.current_task()
            assert task is not None
            try:
                await gate.wait()
            except asyncio.CancelledError:
                counts.append(task.cancelling())
                counts.append(task.uncancel())
                counts.append(task.uncancel())
            await asyncio.sleep(0)  # swallowed both requests: keeps running
            counts.append(task.cancelling())

        task = asyncio.create_task(child())
        await asyncio.sleep(0)
        task.cancel()
        task.cancel()
        await task
        return counts

    assert run(main) == [2, 1, 0, 0]
