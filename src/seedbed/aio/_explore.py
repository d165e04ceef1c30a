"""Exploration the loop does by default: task-step order and a coarse clock.

Both are `LoopConfig` options, on by default because what finds bugs at
little cost is on unless a user turns it off (`explore_tasks=False`,
`clock_resolution=0`); the trace header records both. Off, the loop's hot
path is as it was (a coarse clock installs its own timer methods on the loop;
task order costs one local test per batch of two or more callbacks, and the
counts `call_soon` keeps of what it queues with a context).

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

Batches of up to 16 steps draw a uniform order. Larger ones (hundreds of
tasks yielding together) draw a turn (rotation), a reversal and one window of
16 consecutive steps in a uniform order: every pair either way with
probability 1/2, any three in all six orders, at a fixed cost per batch where
a uniform order cost a sort and a long trace value (+40% instructions per
step on `bench/loop.py`'s sleep(0) workload). Which callbacks a batch holds
is found by a scan of its handles, except where less already says: a queue
of a C task's steps and wakeups only, maybe with `asyncio.sleep` timers due
together behind them, is known from `call_soon`'s counts (and the count of
sleeps `_collect_due_timers` keeps) and reordered without one: each from its
own cause (tasks yielding or sleeping together) by `reorder_lone_steps`, or
the loop itself for a pair; some queued by one callback (a step that woke
several tasks) by `reorder_task_runs`, which looks only at their causes and
tasks. A loop with lanes scans every batch, so `call_soon` keeps no counts
there (`LoopState.counting`). A pair of handles from one cause (a task's done
callbacks, as most batches of a networked world are) is known from its two
causes and left as it is (`PAIR`), and a pair from two causes is drawn by
`reorder_pair` without one; a scanned batch from one cause stops at its
causes, and one of up to 16 handles is scanned in a single pass
(`_reorder_small`). In both worlds the scan cost more per step than all the
rest of exploration. The orders' keys come from `Stream.order`'s pool, drawn
and folded into the trace hash 256 keys at a time: a fold per order (64-bit
multiplies on Python integers) cost more than the order (issue 50).

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
instant") decides which fires first (with task-order exploration on, a tie
of `asyncio.sleep`s only is left in heap order: their wakeups' order is
drawn in the next batch, see `SLEEP_WAKER`). Timers with different delays set in one
tick keep their order, as on a real coarse clock. On a nanosecond clock with
a virtual CPU cost per callback, two sleeps started one after the other never
tie; on Windows' monotonic clock (15.6 ms), Linux's coarse clock (4 ms) or an
epoll loop that wakes on millisecond timeouts they do, and code that assumes
the first-set timer fires first breaks there. The world's own timers
(network deliveries, disk latency, fault episodes, `Simulation.at`) stay
exact: I/O completes when it completes. A timer already due when it is set
(`call_later(0)`, a negative delay, a `call_at` deadline reached) is not
rounded: it runs on the next iteration, as on every real loop whatever its
clock (asyncio fires what is due within one clock resolution of now), so
callbacks that stay ready never hold it back for the rest of a tick.
"""

from __future__ import annotations

import asyncio
import types
from collections import deque
from itertools import islice, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from seedbed._core import Stream
from seedbed._core.contract import broken, require

if TYPE_CHECKING:
    from seedbed.aio._handles import SimHandle, SimTimerHandle
    from seedbed.aio._pct import Pct

# A tuple: inside a run interposition rebinds module globals that hold
# `asyncio.Task` to its stand-in (`_taskclass`), whose type check is Python code.
TASK_TYPES = (asyncio.Task,)
# The type of a C method bound to its object: a C task's wakeup (`task_wakeup`)
# is one, bound to the task (the loop counts those it queues, see LoopState).
C_METHOD = types.BuiltinMethodType

# Batches of up to this many task steps draw a uniform order; larger ones a
# turn, a reversal and one uniformly ordered window (`_large_order`).
UNIFORM_MAX = 16

# The batch length the loop tells "one cause" of inline: a pair whose two
# handles one callback queued (a task's done callbacks, as its last step
# queues them) has nothing to draw whatever they are, so the scan is skipped.
# Most batches of a networked world are such pairs; 0 turns the check off
# (`test_explore_sound` compares both ways).
PAIR = 2

# What a callback's type says about it, learned once per type: PLAIN (a
# function, a partial: never a task's), BOUND (carries `__self__`: a bound
# method, a C method, maybe a task's step or wakeup) or STEP (the C task's
# `__step` wrapper, as `call_soon(task.__step)` schedules it: always a task's
# step; known by name, `_asyncio` does not export it). A lookup by type,
# never iterated.
PLAIN, BOUND, STEP = 0, 1, 2
_KINDS: dict[type, int] = {}
_STEP_WRAPPER = "TaskStepMethWrapper"


def _learn_kind(kind: type) -> int:
    """`_KINDS[kind]`, worked out the first time `kind` is seen."""
    if kind.__name__ == _STEP_WRAPPER and kind.__module__ in ("_asyncio", "builtins"):
        learned = STEP
    elif any("__self__" in vars(klass) for klass in kind.__mro__):
        learned = BOUND
    else:
        learned = PLAIN
    _KINDS[kind] = learned
    return learned


def _kind(kind: type) -> int:
    learned = _KINDS.get(kind)
    return _learn_kind(kind) if learned is None else learned


class _StepCatcher:
    """The least of a loop `Task.__init__` needs: it keeps the step it is given."""

    step: object = None

    def get_debug(self) -> bool:
        return False

    def call_soon(self, callback: object, *args: object, context: object = None) -> None:
        self.step = callback


async def _idle() -> None:
    """The probe task's coroutine (closed unrun)."""


def _find_step_type() -> type | None:
    """The type of the callback a C task schedules its `__step` with, or None.

    `call_soon` counts the task steps queued each from its own cause
    (`LoopState.lone_cause`) by this one type test; `_asyncio` does not export
    the type, so one task is made on a stand-in loop that keeps the callback.
    Named, so asyncio's task-name counter does not move; never run, and not
    logged as destroyed while pending. Without the C tasks, None: nothing is
    counted and every batch takes the scanning path.
    """
    catcher = _StepCatcher()
    coro = _idle()
    try:
        task = asyncio.Task(coro, loop=catcher, name="seedbed step probe")  # type: ignore[arg-type]
    finally:
        coro.close()
    task._log_destroy_pending = False  # type: ignore[attr-defined]
    found = type(catcher.step)
    return found if _kind(found) == STEP else None


STEP_TYPE = _find_step_type()


STEP_ORDER = "order of task steps ready together"
_TURN = "turn of a large batch of task steps ready together"
_WINDOW = "window of a large batch of task steps"
_callback_of = attrgetter("_callback")
_self_of = attrgetter("__self__")
_cause_of = attrgetter("cause")


def task_of(handle: Any) -> asyncio.Task[Any] | None:
    """The task a ready callback resumes, or None for a plain callback.

    A task's step (`TaskStepMethWrapper` or `Task.__step`) and its wakeup
    (`task_wakeup` or `Task.__wakeup`) are bound to the task.
    """
    owner = getattr(handle._callback, "__self__", None)
    return owner if isinstance(owner, TASK_TYPES) else None


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
    if len(queue) < n:  # the hot-path form of a rule (see contract): no call when it holds
        broken("a reorder stays within the batch", n=n, queued=len(queue))
    whole = n == len(queue)
    source: deque[Any] | list[Any] = queue if whole else list(islice(queue, n))
    # How many causes, then which kinds the batch holds, in C-level passes:
    # counts and a set of flags, the same whatever order the sets iterate in.
    distinct_causes = len(set(map(_cause_of, source)))
    if distinct_causes < 2 and pct is None:
        return  # one callback queued them all: one order, nothing drawn
    if whole and n <= UNIFORM_MAX and pct is None:  # most batches: one pass over them
        _reorder_small(queue, distinct_causes, sched)
        return
    # Maybe hundreds of tasks yielding together: their kinds, with no list made
    # (the first handle's kind turns away the wakeups of timers due together).
    if (
        whole
        and n > UNIFORM_MAX
        and pct is None
        and distinct_causes == n
        and _kind(type(source[0]._callback)) == STEP
        and {_kind(kind) for kind in set(map(type, map(_callback_of, source)))} == {STEP}
    ):
        _turn_in_place(queue, sched)
        return
    callbacks = list(map(_callback_of, source))  # one pass: the kinds and the owners
    kinds = {_kind(kind) for kind in set(map(type, callbacks))}
    if kinds == {PLAIN}:
        return  # plain callbacks only: nothing to reorder
    batch = source if isinstance(source, list) else list(source)  # islice made a fresh one
    if PLAIN not in kinds:
        owners = list(map(_self_of, callbacks))
        if all(map(isinstance, owners, repeat(TASK_TYPES))):
            if _reorder_all(batch, owners, distinct_causes, sched, pct):
                _replace_front(queue, n, batch)
            return
    if _reorder_some(batch, callbacks, sched, pct):
        _replace_front(queue, n, batch)


def reorder_lone_steps(queue: deque[Any], lone: int, sched: Stream) -> None:
    """Draw the order of a queue whose first `lone` handles are task steps
    or wakeups, each from its own cause, and whose rest are the plain
    callbacks of `asyncio.sleep` timers, as `reorder_task_steps` would,
    without looking at the handles.

    The loop knows this from its counts (`LoopState.lone`); the scan that
    would learn it costs more per step than the rest of the draw. The draws
    and the order are `reorder_task_steps`'s for such a batch: the plain
    callbacks keep their slots, and the task callbacks take the drawn order as
    it stands (`test_explore_sound` runs both). The most common such batch,
    two tasks yielding together, the loop swaps itself (`Stream.swapped`,
    the same draw as `order(2)`).
    """
    if lone < PAIR:
        broken("lone task callbacks drawn here are two or more", lone=lone)
    whole = lone == len(queue)
    if whole and lone > UNIFORM_MAX:
        _turn_in_place(queue, sched)
        return
    batch = list(islice(queue, lone))
    order = map(batch.__getitem__, draw_order(lone, sched))
    if whole:
        queue.clear()
        queue.extend(order)
    else:
        _replace_front(queue, lone, list(order))


def reorder_task_runs(queue: deque[Any], tasks: int, causes: int, sched: Stream) -> None:
    """Draw the order of a queue whose first `tasks` handles are task steps or
    wakeups from `causes` callbacks, some of which queued several, and whose
    rest are the plain callbacks of `asyncio.sleep` timers, as
    `reorder_task_steps` would, looking only at the task callbacks' causes and
    tasks (the loop knows the rest from its counts, `LoopState`).

    The draws and the order are the scan's (`test_explore_sound` runs both):
    the plain callbacks keep their slots, each cause's callbacks keep their
    queue order, and a task's own callbacks theirs.
    """
    if causes < PAIR:
        broken("task callbacks of one cause have one order: nothing to draw", causes=causes)
    prefix = list(islice(queue, tasks))
    prefix, order = _in_cause_and_task_order(
        prefix,
        draw_order(tasks, sched),
        [handle.cause for handle in prefix],
        [handle._callback.__self__ for handle in prefix],
    )
    _replace_front(queue, tasks, [prefix[chosen] for chosen in order])


def reorder_pair(queue: deque[Any], sched: Stream) -> None:
    """Draw the order of a queue of two handles from two causes, as
    `reorder_task_steps` would (without PCT), with no scan.

    Most batches that draw are such pairs. Both are a task's (a step or a
    wakeup: a callback bound to a task): one draw, and maybe a swap. One is
    not: a lone step has nothing to draw. The loop has checked the length,
    the causes and that PCT is off; `test_explore_sound` runs both paths.
    """
    first, second = queue[0], queue[1]
    if first.cause == second.cause:
        broken("a pair drawn here has two causes", cause=first.cause)
    for callback in (first._callback, second._callback):
        kind = _KINDS.get(type(callback))
        if kind is None:
            kind = _learn_kind(type(callback))
        if kind == PLAIN or not isinstance(callback.__self__, TASK_TYPES):
            return
    if sched.swapped(STEP_ORDER):  # order(2) is [1, 0]
        queue[0], queue[1] = second, first


def _turn_in_place(queue: deque[Any], sched: Stream) -> None:
    """All that is ready is more than `UNIFORM_MAX` tasks' `__step`s (tasks
    yielding with `sleep(0)`), each from its own cause: `_large_order`'s
    draws and order, applied by rotating and reversing the deque itself.
    The twin of `_large_order` (which builds the order as indices, for
    batches that mix steps with callbacks): the two draw alike and give the
    same order (`test_explore_sound`)."""
    count = len(queue)
    turn = sched.below(2 * count, _TURN)
    queue.rotate(-(turn % count))
    if turn >= count:
        queue.reverse()
    start = sched.below(count - UNIFORM_MAX + 1, _WINDOW)
    window = [queue[start + i] for i in range(UNIFORM_MAX)]
    for offset, chosen in enumerate(sched.order(UNIFORM_MAX, STEP_ORDER)):
        queue[start + offset] = window[chosen]


def _reorder_all(
    batch: list[Any], owners: list[asyncio.Task[Any]], distinct_causes: int, sched: Stream,
    pct: Pct | None,
) -> bool:  # fmt: skip
    """A batch of task steps only (tasks yielding with `sleep(0)`, waking
    together): reordered in place, in C-level passes. False if it stays.

    `distinct_causes` is the caller's count of the batch's causes (it has
    just taken it to decide whether to come here at all)."""
    if distinct_causes < 2 and pct is None:  # PCT counts every step it orders
        return False
    n = len(batch)
    if distinct_causes == n and pct is None:
        # Each from its own cause: the drawn order applies to the batch as it
        # stands. Two of one task here are never two steps (asyncio keeps one
        # pending per task) but a step and, say, `task.cancel` called soon by
        # another callback: their order is I/O timing's, free to draw.
        batch[:] = map(batch.__getitem__, draw_order(n, sched))
        return True
    causes = list(map(_cause_of, batch))
    _refill(batch, list(range(n)), owners, causes, distinct_causes, sched, pct)
    return True


def _reorder_some(batch: list[Any], callbacks: list[Any], sched: Stream, pct: Pct | None) -> bool:
    """A batch of plain callbacks and task steps: the steps' slots refilled.
    False if it stays."""
    slots: list[int] = []
    owners: list[asyncio.Task[Any]] = []
    causes: list[int] = []
    for index, callback in enumerate(callbacks):
        if _KINDS[type(callback)]:  # every type here was learned above
            owner = callback.__self__
            if isinstance(owner, TASK_TYPES):  # task_of, inlined
                slots.append(index)
                owners.append(owner)
                causes.append(batch[index].cause)
    if len(slots) < 2:
        return False
    distinct_causes = len(set(causes))  # a count: no order comes from the set
    if distinct_causes < 2 and pct is None:
        return False
    _refill(batch, slots, owners, causes, distinct_causes, sched, pct)
    return True


def _reorder_small(queue: deque[Any], distinct_causes: int, sched: Stream) -> None:
    """`reorder_task_steps` for a whole queue of up to `UNIFORM_MAX` handles
    from two causes or more, without PCT: the same draws and the same order,
    from one pass over the handles where the general path makes several (the
    batches of a few callbacks that most iterations run cost less than half).

    As there: a queue of task callbacks only, each from its own cause, takes
    the drawn order as it stands (`_reorder_all`); otherwise the task slots
    are refilled (`_refill`), plain callbacks keeping theirs.
    """
    batch = list(queue)
    slots: list[int] = []
    owners: list[Any] = []
    causes: list[int] = []
    for index, handle in enumerate(batch):
        callback = handle._callback
        kind = _KINDS.get(type(callback))
        if kind is None:
            kind = _learn_kind(type(callback))
        if kind:
            owner = callback.__self__
            if isinstance(owner, TASK_TYPES):  # task_of, inlined
                slots.append(index)
                owners.append(owner)
                causes.append(handle.cause)
    count = len(slots)
    if count < 2:
        return
    if count == len(batch):  # steps only: the causes counted are the slots' causes
        drawn = sched.order(count, STEP_ORDER)
        if distinct_causes != count:  # `_refill` with every slot a step, in one pass
            batch, drawn = _in_cause_and_task_order(batch, drawn, causes, owners)
        queue.clear()
        queue.extend(map(batch.__getitem__, drawn))
        return
    else:
        distinct_causes = len(set(causes))  # a count: no order comes from the set
        if distinct_causes < 2:
            return
    _refill(batch, slots, owners, causes, distinct_causes, sched, None)
    queue.clear()
    queue.extend(batch)


def _replace_front(queue: deque[Any], n: int, batch: list[Any]) -> None:
    """The first `n` entries of `queue` replaced by `batch`."""
    if n == len(queue):
        queue.clear()
        queue.extend(batch)
        return
    for _ in range(n):
        queue.popleft()
    queue.extendleft(reversed(batch))


def draw_order(count: int, sched: Stream) -> list[int]:
    """An order of `count` ready task steps, drawn from `sched`.

    Up to `UNIFORM_MAX` steps, a uniform permutation. Beyond, a uniform
    permutation costs a sort and a long trace value per batch, which made
    runs of hundreds of tasks yielding together 40% dearer; `_large_order`
    keeps what finds races at a fixed cost per batch.
    """
    if count <= UNIFORM_MAX:
        return sched.order(count, STEP_ORDER)
    return _large_order(count, sched)


def _large_order(count: int, sched: Stream) -> list[int]:
    """A large batch's order: turned (rotated) and maybe reversed, then one
    window of `UNIFORM_MAX` consecutive steps uniformly reordered.

    Every pair of steps runs in either order with probability 1/2 (a pair
    d apart swaps under d of the n turns unreversed and n - d reversed), and
    any three can come in all six orders; steps that land in one window, in
    any order at all. trio reverses its batches at random for the same
    reason: so that each task can run before or after any other.
    """
    turn = sched.below(2 * count, _TURN)
    shift = turn % count
    order = [*range(shift, count), *range(shift)]
    if turn >= count:
        order.reverse()
    start = sched.below(count - UNIFORM_MAX + 1, _WINDOW)
    window = order[start : start + UNIFORM_MAX]
    drawn = sched.order(UNIFORM_MAX, STEP_ORDER)
    order[start : start + UNIFORM_MAX] = [window[i] for i in drawn]
    if len(order) != count:
        broken("a large batch's order places every step", count=count, placed=len(order))
    return order


def _refill(
    batch: list[Any], slots: list[int], owners: list[asyncio.Task[Any]], causes: list[int],
    distinct_causes: int, sched: Stream, pct: Pct | None,
) -> None:  # fmt: skip
    """`reorder_task_steps`'s draw: the step slots refilled in a drawn order."""
    drawn = draw_order(len(slots), sched) if pct is None else pct.order(owners)
    if pct is not None:
        require(sorted(drawn) == list(range(len(slots))), "a PCT order places every step")
    steps = [batch[index] for index in slots]
    if distinct_causes == len(slots):
        order = drawn  # each from its own cause: as it stands (see `_reorder_all`)
    else:
        steps, order = _in_cause_and_task_order(steps, drawn, causes, owners)
    for slot, chosen in zip(slots, order, strict=True):
        batch[slot] = steps[chosen]
        if pct is not None:
            pct.ran(owners[chosen])


def _in_cause_and_task_order(
    steps: list[Any], drawn: list[int], causes: list[int], owners: list[Any]
) -> tuple[list[Any], list[int]]:
    """`drawn` with each cause's steps in their queue order (`keep_cause_order`),
    and `steps` with each task's in theirs where a task has two: the rule of
    every path that orders a batch some callback queued several of (the scan's
    and `reorder_task_runs`), kept in one place so that they order alike."""
    order = keep_cause_order(drawn, causes)
    if len(set(owners)) != len(owners):  # a count; a step and a call of one task's method
        steps = _each_task_in_order(steps, owners, order)
    return steps, order


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


# The callback of an `asyncio.sleep`'s timer. A tie of such timers only:
# each completes the future its sleeping task awaits, which queues that
# task's wakeup, so the tie's order shows only as the order of those wakeups,
# one each from its own cause, and with task-order exploration on the next
# batch draws exactly that order. So the loop does not draw the tie first
# (it counts them as it collects a tie): the same orders can come, for one
# draw instead of two (issue 50: these ties were a tenth of the cost of a
# program sleeping on a coarse clock). A tie with any other timer (a
# program's `call_later` callback, `asyncio.timeout`) is drawn, as without
# exploration: a plain callback keeps its slot when a batch is reordered.
SLEEP_WAKER = asyncio.futures._set_result_unless_cancelled  # type: ignore[attr-defined]


def tick_ns(resolution: float) -> int:
    """A clock resolution in whole nanoseconds (at least one)."""
    return max(1, round(resolution * 1_000_000_000))


def round_up(when_ns: int, tick: int) -> int:
    """The first tick at or after `when_ns`: a coarse deadline is never early."""
    rounded = -(-when_ns // tick) * tick
    if not when_ns <= rounded < when_ns + tick:
        broken("a coarse deadline is the first tick at or after it", when=when_ns, tick=tick)
    return rounded
