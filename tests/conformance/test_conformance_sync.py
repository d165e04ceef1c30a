"""Queues, locks, events, semaphores, conditions and barriers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


async def _settle() -> None:
    """Let every task that can run do so (a short timer: each woken task steps)."""
    await asyncio.sleep(0.005)


def test_a_queue_delivers_items_in_fifo_order(run: Any) -> None:
    async def main() -> list[int]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        received: list[int] = []

        async def consumer() -> None:
            for _ in range(10):
                received.append(await queue.get())

        task = asyncio.create_task(consumer())
        for i in range(10):
            await queue.put(i)
            if i % 3 == 0:
                await asyncio.sleep(0)
        await task
        return received

    assert run(main) == list(range(10))


def test_a_full_queue_blocks_the_producer_until_a_slot_frees(run: Any) -> None:
    async def main() -> list[Any]:
        queue: asyncio.Queue[int] = asyncio.Queue(maxsize=2)
        put: list[int] = []

        async def producer() -> None:
            for i in range(5):
                await queue.put(i)
                put.append(i)

        task = asyncio.create_task(producer())
        await _settle()
        states: list[Any] = [list(put), queue.full()]
        with pytest.raises(asyncio.QueueFull):
            queue.put_nowait(99)
        states.append(await queue.get())
        await _settle()
        states.append(list(put))
        states.extend([await queue.get() for _ in range(4)])
        await task
        with pytest.raises(asyncio.QueueEmpty):
            queue.get_nowait()
        return states

    assert run(main) == [[0, 1], True, 0, [0, 1, 2], 1, 2, 3, 4]


def test_queue_join_returns_only_after_every_item_is_marked_done(run: Any) -> None:
    async def main() -> tuple[list[int], int]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        processed: list[int] = []

        async def worker() -> None:
            while True:
                item = await queue.get()
                await asyncio.sleep(0.001 * (item % 3))
                processed.append(item)
                queue.task_done()

        for i in range(9):
            queue.put_nowait(i)
        workers = [asyncio.create_task(worker()) for _ in range(3)]
        await queue.join()
        at_join = len(processed)
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        with pytest.raises(ValueError):
            queue.task_done()  # more task_done() calls than items
        return sorted(processed), at_join

    assert run(main) == (list(range(9)), 9)


def test_a_priority_queue_returns_the_smallest_item_first(run: Any) -> None:
    async def main() -> list[str]:
        queue: asyncio.PriorityQueue[tuple[int, str]] = asyncio.PriorityQueue()
        for item in [(3, "c"), (1, "a"), (4, "d"), (2, "b")]:
            await queue.put(item)
        return [(await queue.get())[1] for _ in range(4)]

    assert run(main) == ["a", "b", "c", "d"]


def test_a_lifo_queue_returns_the_newest_item_first(run: Any) -> None:
    async def main() -> list[int]:
        queue: asyncio.LifoQueue[int] = asyncio.LifoQueue()
        for i in range(4):
            queue.put_nowait(i)
        return [queue.get_nowait() for _ in range(4)]

    assert run(main) == [3, 2, 1, 0]


def test_a_lock_admits_one_holder_at_a_time(run: Any) -> None:
    async def main() -> tuple[int, int]:
        lock = asyncio.Lock()
        inside = 0
        most = 0
        entered = 0

        async def worker(i: int) -> None:
            nonlocal inside, most, entered
            for _ in range(3):
                async with lock:
                    inside += 1
                    entered += 1
                    most = max(most, inside)
                    await asyncio.sleep(0.001 * (i % 2))
                    await asyncio.sleep(0)
                    inside -= 1

        await asyncio.gather(*(worker(i) for i in range(6)))
        return most, entered

    assert run(main) == (1, 18)


def test_lock_waiters_acquire_in_the_order_they_started_waiting(run: Any) -> None:
    async def main() -> list[int]:
        lock = asyncio.Lock()
        order: list[int] = []

        async def waiter(i: int) -> None:
            async with lock:
                order.append(i)
                await asyncio.sleep(0)

        await lock.acquire()
        tasks = []
        for i in range(6):
            tasks.append(asyncio.create_task(waiter(i)))
            await asyncio.sleep(0)  # waiter i queues before waiter i + 1 exists
        assert lock.locked() and order == []
        lock.release()
        await asyncio.gather(*tasks)
        return order

    assert run(main) == [0, 1, 2, 3, 4, 5]


def test_an_event_wakes_every_waiter_when_set(run: Any) -> None:
    async def main() -> list[Any]:
        event = asyncio.Event()
        woke: list[int] = []

        async def waiter(i: int) -> None:
            await event.wait()
            woke.append(i)

        tasks = [asyncio.create_task(waiter(i)) for i in range(4)]
        await _settle()
        states: list[Any] = [list(woke), event.is_set()]
        event.set()
        await asyncio.gather(*tasks)
        states += [sorted(woke), event.is_set()]
        event.clear()
        states.append(event.is_set())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(event.wait(), 0.01)  # cleared: waits again
        return states

    assert run(main) == [[], False, [0, 1, 2, 3], True, False]


def test_a_semaphore_bounds_the_number_of_concurrent_holders(run: Any) -> None:
    async def main() -> tuple[int, int]:
        semaphore = asyncio.Semaphore(2)
        inside = 0
        most = 0

        async def worker(i: int) -> None:
            nonlocal inside, most
            async with semaphore:
                inside += 1
                most = max(most, inside)
                await asyncio.sleep(0.001 * (1 + i % 3))
                inside -= 1

        await asyncio.gather(*(worker(i) for i in range(8)))
        return most, inside

    assert run(main) == (2, 0)


def test_a_bounded_semaphore_refuses_a_release_above_its_initial_value(run: Any) -> None:
    async def main() -> tuple[bool, bool]:
        semaphore = asyncio.BoundedSemaphore(1)
        await semaphore.acquire()
        locked = semaphore.locked()
        semaphore.release()
        with pytest.raises(ValueError):
            semaphore.release()
        return locked, semaphore.locked()

    assert run(main) == (True, False)


def test_condition_wait_for_returns_once_the_predicate_holds(run: Any) -> None:
    async def main() -> tuple[int, bool]:
        condition = asyncio.Condition()
        items: list[int] = []
        seen = -1

        async def consumer() -> None:
            nonlocal seen
            async with condition:
                await condition.wait_for(lambda: len(items) >= 3)
                seen = len(items)

        task = asyncio.create_task(consumer())
        for i in range(5):
            await asyncio.sleep(0.001)
            async with condition:
                items.append(i)
                condition.notify_all()
            if len(items) == 3:
                await _settle()
                break
        await task
        return seen, condition.locked()

    assert run(main) == (3, False)


def test_condition_notify_n_wakes_exactly_n_waiters(run: Any) -> None:
    async def main() -> list[int]:
        condition = asyncio.Condition()
        woke: list[int] = []

        async def waiter(i: int) -> None:
            async with condition:
                await condition.wait()
                woke.append(i)

        tasks = [asyncio.create_task(waiter(i)) for i in range(5)]
        await _settle()
        counts = [len(woke)]
        async with condition:
            condition.notify(2)
        await _settle()
        counts.append(len(woke))
        async with condition:
            condition.notify(1)
        await _settle()
        counts.append(len(woke))
        async with condition:
            condition.notify_all()
        await asyncio.gather(*tasks)
        counts.append(len(woke))
        return counts

    assert run(main) == [0, 2, 3, 5]


def test_condition_wakes_waiters_in_the_order_they_waited(run: Any) -> None:
    async def main() -> list[int]:
        condition = asyncio.Condition()
        woke: list[int] = []

        async def waiter(i: int) -> None:
            async with condition:
                await condition.wait()
                woke.append(i)

        tasks = []
        for i in range(4):
            tasks.append(asyncio.create_task(waiter(i)))
            await asyncio.sleep(0)
        async with condition:
            condition.notify_all()
        await asyncio.gather(*tasks)
        return woke

    assert run(main) == [0, 1, 2, 3]


def test_a_barrier_releases_its_parties_together_with_distinct_indices(run: Any) -> None:
    async def main() -> tuple[list[str], list[int], int]:
        barrier = asyncio.Barrier(3)
        events: list[str] = []
        indices: list[int] = []

        async def party(delay: float) -> None:
            await asyncio.sleep(delay)
            events.append("arrive")
            indices.append(await barrier.wait())
            events.append("pass")

        await asyncio.gather(party(0.01), party(0.02), party(0.005))
        return events, sorted(indices), barrier.n_waiting

    assert run(main) == (["arrive"] * 3 + ["pass"] * 3, [0, 1, 2], 0)


def test_a_barrier_can_be_reused_for_several_rounds(run: Any) -> None:
    async def main() -> list[tuple[int, str]]:
        barrier = asyncio.Barrier(2)
        events: list[tuple[int, str]] = []

        async def party(name: str, delay: float) -> None:
            for round_ in range(3):
                await asyncio.sleep(delay)
                await barrier.wait()
                events.append((round_, name))

        await asyncio.gather(party("a", 0.001), party("b", 0.003))
        return events

    rounds = [round_ for round_, _ in run(main)]
    assert rounds == [0, 0, 1, 1, 2, 2]
