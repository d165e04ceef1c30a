"""Exploration the loop does by default: task-step order and a coarse clock.

Both are `LoopConfig` options, on by default because what finds bugs at
little cost is on unless a user turns it off (`explore_tasks=False`,
`clock_resolution=0`); the trace header records both. Off, the loop's hot
path is as it was (a coarse clock installs its own timer methods on the loop;
task order costs one local test per batch of two or more callbacks).

Task-order exploration (`explore_tasks`)
----------------------------------------
asyncio runs the callbacks ready at the start of an iteration in the order
they were scheduled. Among them are *task steps*: a task resuming, either
its `__step` (scheduled by `sleep(0)`, a new task, a cancellation) or its
wakeup (the future it awaited completed). With exploration on, the steps in
one iteration's batch run in an order drawn from the seed ("order of task
steps ready together"), within three rules that every real loop keeps:

- plain callbacks (`call_soon(f)`, a future's non-task done callbacks,
  protocol callbacks, timers' callbacks) keep their slots in the batch, so
  `call_soon` order among them holds;
- the steps *one callback* scheduled resume in the order it scheduled them
  (`keep_cause_order`): the waiters one `Event.set()` or `notify_all()`
  woke, the tasks one `gather` or `create_task` sequence started, the tasks
  awaiting one future. That order is the program's, not I/O timing's, so
  no real loop ever shows another. Only how different causes' steps
  interleave is drawn. (A task never has two steps pending at once; if it
  ever had, they keep their order too.)
- no callback moves to another iteration: a step made ready during this
  iteration still waits for the next one, timers fire in deadline order and
  one iteration takes only one deadline's timers, so wakeups that time
  ordered are never reordered; a lane (node) still runs only its own batch.

So the relaxed promise is exactly "tasks that different callbacks made
ready together resume in the order their wakeups were scheduled". A real
program cannot rely on that order: a task's place in the batch is set by
when the thing it awaited completed, and that is I/O timing (which socket the
selector reported first, whether a read returned a tick earlier, whether the
lock's releaser was itself woken by I/O). `await asyncio.sleep(0)` is where
this matters most: it is the usual way to yield "to the others", and code
that is only correct because the others then run in FIFO order has a race
that a real network's timing exposes. (trio randomizes its run-queue batches
for the same reason.)

Coarse clocks (`clock_resolution=S`, 1 ms by default)
-----------------------------------------------------
The program's timers read the time on a clock of S-second ticks: a delay
counts from the end of the current tick (`call_later`; `call_at` deadlines
move by as much), so a timer never fires early, fires at most one tick late,
and two timers set within one tick for the same delay are due at the same
instant, where the loop's seeded tie order ("order of timers due at one
instant") decides which fires first. Timers with different delays set in one
tick keep their order, as on a real coarse clock. On a nanosecond clock with
a virtual CPU cost per callback, two sleeps started one after the other never
tie; on Windows' monotonic clock (15.6 ms), Linux's coarse clock (4 ms) or an
epoll loop that wakes on millisecond timeouts they do, and code that assumes
the first-set timer fires first breaks there. The world's own timers
(network deliveries, disk latency, fault episodes, `Simulation.at`) stay
exact: I/O completes when it completes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from itertools import islice
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
    steps in their order, and the steps one callback scheduled in the order
    it scheduled them (`keep_cause_order`). Steps all from one cause have one
    order: nothing is drawn (except under PCT, which counts the steps).
    """
    require(len(queue) >= n, "a reorder stays within the batch", n=n, queued=len(queue))
    # One pass over the batch in place, no call per callback: the common batch
    # (plain callbacks, or steps from one cause) is left untouched.
    batch = list(islice(queue, n))
    slots: list[int] = []
    owners: list[asyncio.Task[Any]] = []
    for index, handle in enumerate(batch):
        owner = getattr(handle._callback, "__self__", None)  # task_of, inlined
        if isinstance(owner, _TASK):
            slots.append(index)
            owners.append(owner)
    if len(slots) < 2:
        return
    causes = [getattr(batch[index], "cause", -1) for index in slots]
    distinct_causes = len(set(causes))  # a count: no order comes from the set
    if distinct_causes < 2 and pct is None:  # PCT counts every step it orders
        return
    _refill(batch, slots, owners, causes, distinct_causes, sched, pct)
    for _ in range(n):
        queue.popleft()
    queue.extendleft(reversed(batch))


def _refill(
    batch: list[Any], slots: list[int], owners: list[asyncio.Task[Any]], causes: list[int],
    distinct_causes: int, sched: Stream, pct: Pct | None,
) -> None:  # fmt: skip
    """`reorder_task_steps`'s draw: the step slots refilled in a drawn order."""
    if pct is None:
        drawn = sched.permutation(len(slots), "order of task steps ready together")
    else:
        drawn = pct.order(owners)
    order = drawn if distinct_causes == len(slots) else keep_cause_order(drawn, causes)
    require(sorted(order) == list(range(len(slots))), "a step order places every step")
    steps = [batch[index] for index in slots]
    if len(set(owners)) != len(owners):  # never seen: a task with two steps pending
        steps = _each_task_in_order(steps, owners, order)
    for slot, chosen in zip(slots, order, strict=True):
        batch[slot] = steps[chosen]
        if pct is not None:
            pct.ran(owners[chosen])


def _each_task_in_order(
    steps: list[Any], owners: list[asyncio.Task[Any]], order: list[int]
) -> list[Any]:
    """Steps rearranged so that wherever `order` places a task's steps, they
    come in their queue order: only which task fills a slot is drawn."""
    pending: dict[asyncio.Task[Any], deque[Any]] = {}  # a lookup by task, never an order
    for step, task in zip(steps, owners, strict=True):
        pending.setdefault(task, deque()).append(step)
    placed = list(steps)
    for chosen in order:
        placed[chosen] = pending[owners[chosen]].popleft()
    require(not any(pending.values()), "a reorder keeps every task step exactly once")
    return placed


def keep_cause_order(drawn: list[int], causes: list[int]) -> list[int]:
    """`drawn` (a permutation of step indices) with each cause's steps put
    back in their queue order, in the places that cause's steps drew.

    Steps one callback scheduled (the waiters one `Event.set()` woke, the
    tasks one `gather` created, a future's awaiting tasks) resume in that
    order on every real loop: it is the program's order, not I/O timing. Only
    how the causes interleave is drawn.
    """
    pending: dict[int, deque[int]] = {}  # a lookup by cause, never an order
    for index, cause in enumerate(causes):
        pending.setdefault(cause, deque()).append(index)
    order = [pending[causes[index]].popleft() for index in drawn]
    if any(pending.values()):
        broken("a cause-ordered draw places every step once", drawn=drawn, causes=causes)
    return order


def tick_ns(resolution: float) -> int:
    """A clock resolution in whole nanoseconds (at least one)."""
    return max(1, round(resolution * 1_000_000_000))


def round_up(when_ns: int, tick: int) -> int:
    """The first tick at or after `when_ns`: a coarse deadline is never early."""
    rounded = -(-when_ns // tick) * tick
    if not when_ns <= rounded < when_ns + tick:
        broken("a coarse deadline is the first tick at or after it", when=when_ns, tick=tick)
    return rounded
