"""Exploration the loop adds on request: task-step order and coarse clocks.

Both are `LoopConfig` options, off by default; off, the loop's hot path is
unchanged (a coarse clock installs its own timer methods on the loop; task
order costs one local test per batch of two or more callbacks).

Task-order exploration (`explore_tasks=True`)
---------------------------------------------
asyncio runs the callbacks ready at the start of an iteration in the order
they were scheduled. Among them are *task steps*: a task resuming, either
its `__step` (scheduled by `sleep(0)`, a new task, a cancellation) or its
wakeup (the future it awaited completed). With exploration on, the steps in
one iteration's batch run in an order drawn from the seed
("order of task steps ready together"), and nothing else changes:

- plain callbacks (`call_soon(f)`, a future's non-task done callbacks,
  protocol callbacks, timers' callbacks) keep their slots in the batch, so
  `call_soon` order among them holds;
- a task never has two steps pending at once, and if it ever had, they keep
  their order: only *which task* fills each step slot is drawn;
- no callback moves to another iteration: a step made ready during this
  iteration still waits for the next one, timers still fire in deadline
  order, and a lane (node) still runs only its own batch.

So the relaxed promise is exactly "tasks ready together resume in the order
their wakeups were scheduled". A real program cannot rely on that order: a
task's place in the batch is set by when the thing it awaited completed, and
that is I/O timing (which socket the selector reported first, whether a
read returned a tick earlier, whether the lock's releaser was itself woken by
I/O). Every order drawn here is one in which the same tasks became ready in
the same iteration with their wakeups completed in another order, which
different I/O timing produces; an order in which a task runs before what it
awaited completed is never drawn. `await asyncio.sleep(0)` is where this
matters most: it is the usual way to yield "to the others", and code that
is only correct because the others then run in FIFO order has a race that a
real network's timing exposes. (trio randomizes its run-queue batches for the
same reason.)

Coarse clocks (`clock_resolution=S`)
------------------------------------
Every timer deadline is rounded up to the next multiple of S nanoseconds:
a timer never fires early, and two timers set within one tick for the same
delay are due at the same instant, where the loop's existing seeded tie
order ("order of timers due at one instant") decides which fires first. On
a nanosecond clock with a virtual CPU cost per callback, two sleeps started
one after the other never tie; on Windows' monotonic clock (about 15.6 ms)
or on a loop that batches its timers they do, and code that assumes the
first-set timer fires first breaks there.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any

from seedbed._core import Stream
from seedbed._core.contract import broken, require

if TYPE_CHECKING:
    from seedbed.aio._handles import SimHandle, SimTimerHandle
    from seedbed.aio._pct import Pct

# A tuple: inside a run interposition rebinds module globals that hold
# `asyncio.Task` to its stand-in (`_taskclass`), whose type check is Python code.
_TASK = (asyncio.Task,)


def task_of(handle: Any) -> asyncio.Task[Any] | None:
    """The task a ready callback resumes, or None for a plain callback.

    A task's step (`TaskStepMethWrapper` or `Task.__step`) and its wakeup
    (`task_wakeup` or `Task.__wakeup`) are bound to the task.
    """
    owner = getattr(handle._callback, "__self__", None)
    return owner if isinstance(owner, _TASK) else None


def reorder_task_steps(
    queue: deque[SimHandle | SimTimerHandle], n: int, sched: Stream, pct: Pct | None
) -> None:
    """Draw the order of the task steps among the first `n` entries of `queue`.

    Plain callbacks keep their positions; the step slots are refilled with
    the tasks in a drawn order (under PCT, by priority), each task's own
    steps in their order.
    """
    require(len(queue) >= n, "a reorder stays within the batch", n=n, queued=len(queue))
    batch = [queue.popleft() for _ in range(n)]
    slots: list[int] = []
    owners: list[asyncio.Task[Any]] = []
    for index, handle in enumerate(batch):
        task = task_of(handle)
        if task is not None:
            slots.append(index)
            owners.append(task)
    if len(slots) > 1:
        steps: dict[asyncio.Task[Any], deque[Any]] = {}  # a lookup by task, never an order
        for index, task in zip(slots, owners, strict=True):
            steps.setdefault(task, deque()).append(batch[index])
        if pct is None:
            order = sched.permutation(len(slots), "order of task steps ready together")
        else:
            order = pct.order(owners)
        require(sorted(order) == list(range(len(slots))), "a step order places every step")
        for slot, drawn in zip(slots, order, strict=True):
            batch[slot] = steps[owners[drawn]].popleft()
            if pct is not None:
                pct.ran(owners[drawn])
        require(not any(steps.values()), "a reorder keeps every task step exactly once")
    queue.extendleft(reversed(batch))


def tick_ns(resolution: float) -> int:
    """A clock resolution in whole nanoseconds (at least one)."""
    return max(1, round(resolution * 1_000_000_000))


def round_up(when_ns: int, tick: int) -> int:
    """The first tick at or after `when_ns`: a coarse deadline is never early."""
    rounded = -(-when_ns // tick) * tick
    if not when_ns <= rounded < when_ns + tick:
        broken("a coarse deadline is the first tick at or after it", when=when_ns, tick=tick)
    return rounded
