"""A deterministic asyncio event loop on virtual time.

`SeedbedLoop` implements `asyncio.AbstractEventLoop` from scratch (it does not
lean on `BaseEventLoop` internals, which change between CPython versions) and
keeps the C-accelerated `Task` and `Future`. Its guarantees:

- Virtual time. The clock is integer nanoseconds and jumps straight to the
  next timer when nothing is ready: `await asyncio.sleep(86400)` is instant.
- Every callback costs a small virtual CPU time drawn from the entropy, so a
  task spinning on `await asyncio.sleep(0)` still reaches its timeout.
- asyncio's promises hold: `call_soon` callbacks run in the order scheduled,
  timers fire in deadline order, and like asyncio each iteration runs the
  callbacks that were ready when it began, then collects due timers.
- Exploration comes only from what asyncio leaves open: the order of timers
  due at the same instant (drawn from the entropy), optional loop stalls
  before a timer wakes the loop (`timer_jitter_max`: deadlines are lower
  bounds, and all timers are late together, as on a busy real loop), and
  `await seedbed.checkpoint(reason)`, which parks a task until the entropy
  picks it among the parked ones.
- `run_in_executor` and `asyncio.to_thread` run the function inline, at once,
  on the loop's thread: no thread is started and the result is a future that
  is already done. Blocking work inside it blocks the whole simulation, as it
  would block a single-threaded process.
- Failures are loud: `Deadlock` when the awaited future can never complete,
  `BudgetExceeded` when `max_steps`/`max_time` run out, a warning (or with
  `strict=True` a `CancellationSwallowed` failure) when a task swallows its
  cancellation, and `SimulationEscape` when code reaches the real world.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import sys
import threading
from asyncio import constants as asyncio_constants
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from heapq import heapify, heappop, heappush
from itertools import count
from typing import Any, TypeVar, TypeVarTuple, Unpack

from seedbed._core import Entropy, Trace, VirtualClock, contract
from seedbed._core.contract import broken, require
from seedbed._core.hashseed import warn_once_if_unfixed
from seedbed._core.identity import current_node
from seedbed._core.trace import MASK, PRIME
from seedbed.aio import (
    _blocking,
    _breakpoint,
    _collect,
    _escapes,
    _foreign,
    _interpose,
    _lanethreads,
    _sockets,
    _threadlanes,
    _threads,
)
from seedbed.aio._diagnose import budget_error, deadlock_error
from seedbed.aio._digest import unseed_draw
from seedbed.aio._driver import WorldDriver
from seedbed.aio._explore import (
    C_METHOD,
    PAIR,
    SLEEP_WAKER,
    STEP_ORDER,
    STEP_TYPE,
    TASK_TYPES,
    reorder_lone_steps,
    reorder_pair,
    reorder_task_runs,
    reorder_task_steps,
    tick_ns,
)
from seedbed.aio._fold import Echoes
from seedbed.aio._handles import SimFuture, SimHandle, SimTask, SimTimerHandle
from seedbed.aio._host import RunHost
from seedbed.aio._lanes import LaneRouter
from seedbed.aio._state import LoopConfig, LoopState
from seedbed.aio._tasks import TaskWatch
from seedbed.errors import (
    RunContext,
    SimulationEscape,
    SimulationFailure,
    SimulatorBug,
    UsageError,
)

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
_logger = logging.getLogger("seedbed")
_NS = 1_000_000_000
# Steps a loop other code holds lets a failure unwind through the program before
# it leaves the loop (see `_record_failure`).
_UNWIND_STEPS = 10_000
_DEBUG_STACK_DEPTH = asyncio_constants.DEBUG_STACK_DEPTH  # how deep debug mode records origins
_new_handle = object.__new__  # handles are built field by field, see call_soon
_copy_context = contextvars.copy_context


def _wake(waiter: asyncio.Future[None]) -> None:
    """`sleep_exact`'s timer: a cancelled sleep's waiter is already done."""
    if not waiter.done():
        waiter.set_result(None)


_task_init = asyncio.Task.__init__  # the C initializer (a slot wrapper: never rebound)
_PATCHED_TIME = (
    "loop.time cannot be patched on seedbed's loop: its timers fire by its own virtual "
    "clock, which makes a fake clock unnecessary; remove the patch and advance time with "
    "`await asyncio.sleep(seconds)` (instant in virtual time; loop.time() follows)"
)


def _break_then_run(
    handle: Any, callback: Callable[..., Any], step: int, clock: VirtualClock, *args: Any
) -> Any:
    """The callback of a requested break's step: the debugger first, then the call."""
    handle._callback = callback  # the handle shows its own callback from here on
    _breakpoint.stop_here(handle, step, clock.now)
    return callback(*args)


class SeedbedLoop(TaskWatch):
    """An asyncio event loop whose every choice is drawn from one seed."""

    def __init__(
        self, seed: int = 0, config: LoopConfig | None = None, trace: Trace | None = None
    ) -> None:
        self._st = LoopState(seed, config or LoopConfig(), trace or Trace())
        self._st.trace.on_divergence = self._record_failure  # a replay ends at its divergence
        self._driver = WorldDriver(self, self._st)  # one per loop: a disk asks per operation
        self._numbers = count(1)
        self._task_names = count(1)
        self._timer_numbers = count(1)
        self._closed = False
        self._debug = False
        self._exception_handler: Any = None
        self._echoes = Echoes()  # what its default exception handler logged (see `_fold`)
        self._task_factory: Any = None
        self._network: Any = None
        self._signal_handlers: dict[int, SimHandle] = {}
        self._standalone = False  # made by new_event_loop or the policy (see _idle_forever)
        self._watch: _foreign.ForeignWatch | None = None  # its callers from other threads
        self._unwind_limit: int | None = None  # the step budget before a failure unwinds
        self._host = RunHost(self)
        self._queue = self._st.ready.append  # `ready` is one deque for the loop's life
        self._threads = _threadlanes.ThreadLanes(self, self._st)  # simulated threads
        self._executors: dict[Any, Any] = {}  # default executors, per node (`_services`)
        self.set_debug(self.debug_by_default())
        # Every sleep creates a future; a partial makes the call without a Python frame.
        # 3.11's are numbered (see SimFuture): there no eager task spares aiohttp a
        # set of them. (A subclass costs every await; 3.12+ keep exact futures.)
        self._future_numbers = count(1)
        future_type = SimFuture if sys.version_info < (3, 12) else asyncio.Future
        self.create_future = functools.partial(future_type, loop=self)  # type: ignore[method-assign]
        self._break_step: int | None = None
        self._break_time: int | None = None
        self._real_step_limit = self._st.step_limit
        point = _breakpoint.pending()
        if point is not None:  # see _breakpoint
            self._break_step, self._break_time = point.step, point.time_ns
            lowered = point.step - 1 if point.step is not None else 0  # a time: every batch
            self._st.set_step_limit(min(self._real_step_limit, lowered))
        if self._st.config.clock_resolution:  # instance methods: no cost on the exact path
            self._tick = tick_ns(self._st.config.clock_resolution)
            self.call_later = self._coarse_call_later  # type: ignore[method-assign]
            self.call_at = self._coarse_call_at  # type: ignore[method-assign]

    # -- identity -----------------------------------------------------------

    @property
    def steps(self) -> int:
        """Callbacks run so far."""
        return self._st.steps

    @property
    def trace(self) -> Trace:
        return self._st.trace

    @property
    def clock(self) -> VirtualClock:
        """Virtual time in integer nanoseconds (`clock.now`); `time()` is its float view."""
        return self._st.clock

    @property
    def driver(self) -> WorldDriver:
        """The face a world drives this loop through (see `_driver`)."""
        return self._driver

    @property
    def entropy(self) -> Entropy:
        """The run's entropy: world components draw from their own named streams."""
        return self._st.entropy

    def escape(self, call: str, instead: str) -> SimulationEscape:
        """Record that code tried to reach the real world; return the error to raise.

        The run fails with it even if the caller's code swallows the exception.
        """
        return self._host.escape(call, instead)

    def run_context(self) -> RunContext:
        """Seed, step, time and replay command: what every failure carries."""
        st = self._st
        return RunContext(
            st.entropy.seed, st.steps, st.clock.now, st.replay, st.trace.hash, current_node()
        )

    # -- running ------------------------------------------------------------

    def run_forever(self) -> None:
        self._check_runnable()
        st = self._st
        warn_once_if_unfixed()
        _interpose.activate(self._host)  # first: it refuses to nest, before anything changes
        _blocking.install()
        _sockets.install()
        lanes = self._st.config.threads == "lanes"
        if lanes:
            _lanethreads.install(threading.get_ident())
            _threadlanes.activate(self._threads)
        collector = _collect.Stretch(self._standalone, st.awaited)
        old_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter, finalizer=self._asyncgen_finalizer
        )
        st.running = True
        st.thread = threading.get_ident()
        if self._standalone:  # other threads may call in, in lockstep (see `_foreign`)
            self._watch = self._watch or _foreign.ForeignWatch(self)
            _foreign.start(self._watch)
        origin_depth = sys.get_coroutine_origin_tracking_depth()
        if self._debug:  # as stock's debug mode: warnings say where a coroutine was made
            sys.set_coroutine_origin_tracking_depth(_DEBUG_STACK_DEPTH)
        asyncio.events._set_running_loop(self)
        contract.set_reporter(self._report_bug)
        try:
            self._drive()
        finally:
            contract.set_reporter(None)
            try:  # inside the run still: its finalizers and its randomness count
                collector.collect()
                st.trace.emit("unseed", "random module", unseed_draw())
            finally:
                if self._unwind_limit is not None:  # the budget the failure lowered
                    st.set_step_limit(self._unwind_limit)
                    self._unwind_limit = None
                collector.end()
                if lanes:
                    _threadlanes.activate(None)
                    _lanethreads.restore()
                _sockets.restore()
                _blocking.restore()
                _interpose.deactivate()
                if self._watch is not None:
                    _foreign.stop(self._watch)
                st.running = False
                st.thread = None
                st.stopping = False
                st.halt = st.failure is not None
                asyncio.events._set_running_loop(None)
                sys.set_coroutine_origin_tracking_depth(origin_depth)
                sys.set_asyncgen_hooks(*old_hooks)

    def run_until_complete(self, future: Generator[Any, None, T] | Awaitable[T]) -> T:
        self._check_runnable()
        task = asyncio.ensure_future(future, loop=self)  # type: ignore[arg-type]
        task.add_done_callback(self._stop_on_done)
        self._st.awaited = task
        try:
            self.run_forever()
        finally:
            self._st.awaited = None
            task.remove_done_callback(self._stop_on_done)
        if not task.done():
            raise RuntimeError("Event loop stopped before Future completed.")
        return task.result()

    def _stop_on_done(self, future: asyncio.Future[Any]) -> None:
        # Only for the future being run: a failure halts the loop mid-batch,
        # and the stop its task's end scheduled is still queued when the loop
        # runs again; it must not end that next run at once.
        if future is self._st.awaited:
            self.stop()

    def _check_runnable(self) -> None:
        self._check_open()
        if self._st.running:
            raise RuntimeError("This event loop is already running")
        if asyncio.events._get_running_loop() is not None:
            raise RuntimeError("Cannot run the event loop while another loop is running")

    def stop(self) -> None:
        self._st.stopping = self._st.halt = True

    def is_running(self) -> bool:
        return self._st.running

    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._st.running:
            raise RuntimeError("Cannot close a running event loop")
        self._remove_signal_handlers()
        self._closed = True
        self._st.ready.clear()
        self._st.timers.clear()
        self._st.router = None  # and what its lanes held
        _lanethreads.close_lanes(self._threads)
        if self._standalone:  # what its runs left and other code dropped (see _collect)
            _collect.at_boundary(forget=False)

    # -- the scheduler ------------------------------------------------------

    def _drive(self) -> None:
        """Run iterations until stopped: due timers, a checkpoint, then one batch.

        The one scheduler of every run. A batch is the callbacks that were
        ready when the iteration began, as in asyncio; in a world with lanes
        (`_lanes`) the pick step narrows that to one lane's, so a plain loop
        is the case of a single lane. The batch loop is inlined here: it is
        the innermost loop of every simulation, and a method call per
        iteration showed up in profiles.
        """
        st = self._st
        router = st.router  # kept across drives: what lanes hold when one stops runs next
        if router is None and st.lane_var is not None:
            router = st.router = LaneRouter(st)
        steps, now, events = st.steps, st.clock.now, st.trace.count
        self._drive_with(st, router)
        require(st.steps >= steps, "step counts only grow", before=steps, after=st.steps)
        require(st.clock.now >= now, "the clock never moves backwards", before=now)
        require(st.trace.count >= events, "trace counts only grow", before=events)

    def _drive_with(self, st: LoopState, router: LaneRouter | None) -> None:
        """`_drive`'s loop; `router` (lanes) or None (one FIFO queue, no pick)."""
        ready, timers, clock, costs, trace = st.ready, st.timers, st.clock, st.costs, st.trace
        popleft = ready.popleft
        parked = st.parked  # one list for the loop's life, like `ready` and `timers`
        after_step = st.after_node_step  # every iteration that runs a node's code calls it
        explore, pct = st.config.explore_tasks, st.pct
        threads, thread_ready, thread_turn = self._threads, st.thread_ready, _threadlanes.run_turn
        watch = self._watch  # callers from other threads (a standalone loop's), or None
        # Budgets are set before a run, never during one (`WorldDriver.limit_time`).
        time_limit, wake_limit = st.time_limit, st.wake_limit
        queue: Any = ready  # what this iteration runs: all that is ready, or one lane's
        key: Any = True  # its lane; None is the world's own, True a loop without lanes
        # The length at which an iteration takes the one-callback path: 1 while
        # `queue` is `ready`, -1 (never) for a lane's queue, whose batch path
        # keeps the router's books. One comparison on the plain loop's hot path.
        single = 1
        if router is not None:
            pick, runnable, paused = router.pick, router.runnable, router.paused
            lane_var, forget = router.var, router.by_key.pop
        while True:
            if timers and timers[0][0] <= clock.now:
                entry: tuple[int, int, SimTimerHandle] = heappop(timers)
                # Another due at its deadline (a tie to draw), or this one cancelled (the
                # iteration then takes the next deadline's): the general path. A live
                # timer with the next due later fires alone, as the general path has it.
                # (One due earlier is a heap out of order: the check below says so.)
                if (
                    timers
                    and timers[0][0] <= clock.now
                    and (timers[0][0] <= entry[0] or entry[2]._cancelled)
                ):
                    if timers[0][0] < entry[0]:
                        broken("timers leave the heap in deadline order", after=entry[0],
                               got=timers[0][0])  # fmt: skip
                    heappush(timers, entry)
                    self._collect_due_timers()
                else:
                    due = entry[2]
                    if not due._scheduled:
                        broken("a timer fires once", timer=due)
                    due._scheduled = False
                    if due._cancelled:
                        st.cancelled_timers -= 1
                        if st.cancelled_timers < 0:
                            broken("cancelled timers are counted once", count=st.cancelled_timers)
                    else:
                        ready.append(due)
            if parked:
                self._resume_one_parked()
            if thread_ready and thread_turn(
                threads, bool(ready) or (router is not None and bool(runnable))
            ):
                if st.halt or clock.now > time_limit:
                    self._end_drive()
                    break
                continue  # a thread ran one segment: the next iteration draws again
            if router is not None:
                if runnable or len(ready) != 1 or paused:
                    if ready or runnable:
                        queue = pick()
                        if queue is None:
                            continue  # a dead lane's work was dropped: begin again
                        key = router.key
                        single = 1 if queue is ready else -1
                    else:  # nothing queued anywhere: `pick` would hand back `ready`, empty
                        queue = ready
                else:  # the one callback ready in the world: its lane's pick is forced
                    key = ready[0]._context.get(lane_var)
                    if key is not None and not key.alive:
                        popleft()  # a dead incarnation's: never runs, costs nothing
                        forget(key, None)
                        continue
                    queue = ready
                    single = 1
            n = len(queue)
            if n == single:  # the common case on virtual time: one callback in `ready`
                handle = popleft()
                position = st.cost_position
                if position < st.cost_fence:
                    st.cost_position = position + 1
                    cost = costs[position]
                else:
                    cost = self._batch_costs(1, (handle,))[0]
                if handle._cancelled:  # left the queue without a step (see LoopState)
                    st.looked_until = -1
                else:
                    st.steps += 1
                    clock.now += cost
                    args = handle._args
                    try:  # no `*args` where there are none (task steps): no tuple built
                        if args:
                            handle._context.run(handle._callback, *args)
                        else:
                            handle._context.run(handle._callback)
                    except (SystemExit, KeyboardInterrupt):
                        raise
                    except BaseException as exc:
                        self._callback_failed(exc, handle)
                    if after_step is not None and key is not None:
                        after_step()
                if st.halt or clock.now > time_limit:
                    self._end_drive()
                    break
            elif n:
                # Task steps come with a context (call_soon(step, context=...)):
                # fewer than two such callbacks queued since the last batch
                # that looked means no two steps to order. A lane's batch
                # does not know the world's count.
                looked = (
                    explore
                    and n > 1
                    and (router is not None or st.in_context + st.lone + st.shared > 1)
                )
                if looked:
                    # Nothing left the queue since the last batch looked at ran
                    # out, so it holds what was queued since; if that was only
                    # task callbacks (and sleeps' timers after them), the scan
                    # would find just that (see LoopState).
                    tasks = st.lone + st.shared
                    if (
                        router is None
                        and pct is None
                        and st.steps == st.looked_until
                        and (tasks == n or (st.tail_at == st.steps and tasks + st.sleep_tail == n))
                    ):
                        if st.shared:
                            if st.lone > 1:  # (from one cause: one order, nothing drawn)
                                reorder_task_runs(queue, tasks, st.lone, st.sched)
                        elif tasks == PAIR:  # the most common: maybe swapped, as order(2) draws
                            if st.sched.swapped(STEP_ORDER):
                                queue[0], queue[1] = queue[1], queue[0]
                        else:
                            reorder_lone_steps(queue, tasks, st.sched)
                    elif n == PAIR and pct is None:  # the most common batch that draws
                        if queue[0].cause != queue[1].cause:  # (one cause: see PAIR)
                            reorder_pair(queue, st.sched)
                    elif (
                        n == 3
                        and pct is None
                        and queue[0].cause == queue[1].cause == queue[2].cause
                    ):
                        pass  # one callback queued all three (a step and what it woke): one order
                    else:
                        reorder_task_steps(queue, n, st.sched, pct)
                    st.in_context = st.lone = st.shared = 0
                start = st.cost_position
                end = start + n
                if end <= st.cost_fence:  # no cost refill due and no step budget near
                    st.cost_position = end
                    batch = costs[start:end]
                else:
                    batch = self._batch_costs(n, queue)
                if len(batch) > n:
                    broken("a batch runs only callbacks ready when it began", n=n, batch=len(batch))
                take = queue.popleft
                if router is not None:
                    router.batch = batch  # a crash of this lane's node cuts it short
                steps = st.steps  # only this loop counts steps: a local, stored each step
                for cost in batch:
                    handle = take()
                    if handle._cancelled:
                        st.looked_until = -1  # left the queue without a step
                        continue
                    steps += 1
                    st.steps = steps
                    clock.now += cost
                    args = handle._args
                    try:
                        if args:
                            handle._context.run(handle._callback, *args)
                        else:
                            handle._context.run(handle._callback)
                    except (SystemExit, KeyboardInterrupt):
                        raise
                    except BaseException as exc:
                        self._callback_failed(exc, handle)
                if looked:  # ran out: from here the queue holds what it queued
                    st.looked_until = st.steps
                if router is not None:
                    if queue:
                        router.settle()  # the step budget cut the batch: the lane keeps work
                    else:
                        at = router.lane_at  # where `pick` found it: nothing joined since
                        if runnable[at] is not router.lane:
                            broken("a lane leaves runnable from where it was picked", at=at)
                        del runnable[at]
                        router.lane = None
                if after_step is not None and key is not None:
                    after_step()
                if st.halt or clock.now > time_limit:
                    self._end_drive()
                    break
            elif st.halt:
                if st.failure is not None:
                    raise self._failure_to_raise()
                break
            elif watch is not None and watch.settle(idle=not timers):
                continue  # other threads' calls, taken while the loop had nothing ready
            elif timers and timers[0][0] <= wake_limit and not timers[0][2]._cancelled:
                now = timers[0][0]  # the common case of _sleep_until_next_timer
                if now <= clock.now:
                    broken("the loop wakes only for a timer in the future", at=clock.now, to=now)
                clock.now = now
                steps = st.last_sleep_step = st.steps
                if trace.quiet:  # Trace.time, inlined
                    trace.word = ((trace.word ^ now ^ steps << 24) * PRIME) & MASK
                    trace.now = now
                    trace.step = steps
                    trace.count += 1
                else:
                    trace.time(now, steps)
            elif not self._sleep_until_next_timer() and not threads.can_run():
                raise self._idle_forever()

    def _idle_forever(self) -> SimulationFailure:
        """Nothing can ever run again: a deadlock, unless a real thread could wake
        the loop (see `_threads`), which is an escape naming those threads."""
        # Only a loop other code made and holds (new_event_loop, the policy) can
        # have been handed to a thread before it ran; `seedbed.run`'s and a
        # world's are born inside the call, and a sweep's worker threads (Dask)
        # must not turn their deadlocks into escapes.
        if self._st.failure is not None:  # a failure unwound as far as it could
            return self._failure_to_raise()
        threads = _threads.other_threads() if self._standalone else []
        if not threads:
            return self._fail(deadlock_error(self._st, self._threads.describe()))
        escape = self._host.escape(*_threads.waiting_on_threads(threads))
        if threading.current_thread() is not threading.main_thread():
            # A loop in a worker thread (a portal) fails there, where the code
            # that started it may drop the error: say it where it can be seen.
            _logger.error("in thread %r: %s", threading.current_thread().name, escape)
        return self._failure_to_raise()

    def _end_drive(self) -> None:
        """An iteration halted the loop or ran past the time budget: raise the
        failure or the budget error, or return for a plain stop."""
        st = self._st
        if st.failure is not None:
            raise self._failure_to_raise()
        if st.clock.now > st.time_limit:
            raise self._fail(budget_error(st, f"max_time={st.config.max_time}s"))
        require(st.stopping, "a drive ends on a stop, a failure or the time budget")

    def _batch_costs(self, n: int, upcoming: Sequence[Any]) -> list[int]:
        """Costs for the next batch, refilling the table; shortened to the step budget.

        `upcoming[k]` is the batch's k-th callback: a requested break (its
        step within this batch) is set on the callback that will run it.
        """
        st = self._st
        if self._break_step is not None or self._break_time is not None:
            return self._costs_before_break(n, upcoming)
        left = st.step_limit - st.steps
        if left <= 0:
            if st.failure is not None:  # the steps a failure may unwind for are spent
                raise self._failure_to_raise()
            raise self._fail(budget_error(self._st, f"max_steps={st.step_limit}"))
        batch = st.take_costs(min(n, left))
        require(0 < len(batch) <= n, "a batch takes one cost per callback", n=n, got=len(batch))
        st.place_cost_fence(left - len(batch))
        return batch

    def _costs_before_break(self, n: int, upcoming: Sequence[Any]) -> list[int]:
        """`_batch_costs` while a break is pending: the lowered budget only
        brings the loop here, the real one bounds the batch (a batch is never
        split, or the run would differ from the one being debugged)."""
        st = self._st
        if self._break_step is not None and st.steps + n >= self._break_step:
            self._arm_break(upcoming, n)
        left = self._real_step_limit - st.steps
        if left <= 0:
            raise self._fail(budget_error(self._st, f"max_steps={self._real_step_limit}"))
        batch = st.take_costs(min(n, left))
        require(0 < len(batch) <= n, "a batch takes one cost per callback", n=n, got=len(batch))
        if self._break_time is not None:
            self._arm_time_break(upcoming, batch)
        st.place_cost_fence(max(0, st.step_limit - st.steps - len(batch)))
        return batch

    def _arm_time_break(self, upcoming: Sequence[Any], batch: list[int]) -> None:
        """Wrap the batch's first callback to run at or past the break's time."""
        st = self._st
        require(self._break_time is not None, "a time break is armed only while pending")
        assert self._break_time is not None  # for mypy: require does not narrow
        now, step = st.clock.now, st.steps
        for k, cost in enumerate(batch):
            handle = upcoming[k]
            if handle._cancelled:
                continue  # runs as no step and takes no time
            now += cost
            step += 1
            if now >= self._break_time:
                self._wrap(handle, step)
                self._break_time = None
                st.set_step_limit(self._real_step_limit)
                return

    def _arm_break(self, upcoming: Sequence[Any], n: int) -> None:
        """Wrap the callback that will run the break's step; restore the budget."""
        st = self._st
        require(self._break_step is not None, "a step break is armed only while pending")
        step = st.steps
        for k in range(n):
            handle = upcoming[k]
            if handle._cancelled:
                continue  # runs as no step
            step += 1
            if step == self._break_step:
                self._wrap(handle, step)
                self._break_step = None
                st.set_step_limit(self._real_step_limit)
                return

    def _wrap(self, handle: Any, step: int) -> None:
        handle._callback = functools.partial(
            _break_then_run, handle, handle._callback, step, self._st.clock
        )

    def _collect_due_timers(self) -> None:
        """Move the earliest due deadline's timers to the ready queue, ties in
        seeded order (a tie of sleeps only under task-order exploration: in
        heap order, as the wakeups they queue are drawn, see `_explore.SLEEP_WAKER`).

        Timers due at a later deadline wait for the next iteration: the tasks
        they wake then resume after those the earlier ones woke, as on every
        real loop (a prompt one runs the earlier timers alone), so task-order
        exploration (`_explore`) never reorders wakeups that time ordered.
        """
        st = self._st
        timers, now = st.timers, st.clock.now
        due: list[SimTimerHandle] = []
        sleeps = 0  # how many of them are `asyncio.sleep`s' (see `SLEEP_WAKER`)
        deadline = now  # until the first live timer: what is due; then its tie only
        while timers and timers[0][0] <= deadline:
            when, _, handle = heappop(timers)
            if not handle._scheduled:
                broken("a timer fires once", timer=handle)
            if when != handle.when_ns:
                broken("a timer's heap entry holds its deadline", entry=when, timer=handle)
            handle._scheduled = False
            if handle._cancelled:
                st.cancelled_timers -= 1
                continue
            if not due:
                deadline = when
            due.append(handle)
            if handle._callback is SLEEP_WAKER:
                sleeps += 1
        if due and timers and timers[0][0] < deadline:
            broken("timers leave the heap in deadline order", after=deadline, got=timers[0][0])
        if len(due) > 1:
            if st.config.explore_tasks and sleeps == len(due):  # sleeps only
                st.sleep_tail, st.tail_at = len(due), st.steps  # plain callbacks, at the end
            else:
                order = st.sched.permutation(len(due), "order of timers due at one instant")
                require(len(order) == len(due), "a tie order places every tied timer")
                due = [due[i] for i in order]
        st.ready.extend(due)

    def _sleep_until_next_timer(self) -> bool:
        """Nothing is ready: jump virtual time to the next live timer, if any."""
        st = self._st
        timers = st.timers
        while timers and timers[0][2]._cancelled:
            heappop(timers)[2]._scheduled = False
            st.cancelled_timers -= 1
        require(st.cancelled_timers >= 0, "cancelled timers are counted once")
        if not timers:
            return False
        when = timers[0][0]
        require(when > st.clock.now, "the loop sleeps only until a timer in the future")
        if when > st.time_limit and st.failure is not None:  # unwinding: the failure first
            raise self._failure_to_raise()
        if when > st.time_limit:  # a budget set below the time already reached stays there
            st.clock.advance_to(max(st.time_limit, st.clock.now))
            st.last_sleep_step = st.steps
            raise self._fail(budget_error(self._st, f"max_time={st.config.max_time}s"))
        jitter = st.config.timer_jitter_max
        if jitter:
            when += st.sched.below(int(jitter * _NS) + 1, "loop stall before waking for a timer")
        st.clock.advance_to(when)
        st.last_sleep_step = st.steps
        st.trace.time(st.clock.now, st.steps)
        return True

    def _resume_one_parked(self) -> None:
        """Wake one task parked at a checkpoint; the entropy picks which."""
        st = self._st
        live = [entry for entry in st.parked if not entry[1].done()]
        st.parked.clear()
        if not live:
            return
        index = st.sched.below(len(live), "which parked task resumes")
        reason, future = live.pop(index)
        require(not future.done(), "a parked task resumes once", reason=reason)
        st.parked.extend(live)
        st.trace.emit("resume", reason)
        future.set_result(None)

    async def park(self, reason: str) -> None:
        """Suspend the calling task until the scheduler picks it (see `checkpoint`)."""
        future: asyncio.Future[None] = self.create_future()
        self._st.parked.append((reason, future))
        await future
        require(future.done(), "a parked task resumes only when picked", reason=reason)

    # -- failures -----------------------------------------------------------

    def _fail(self, failure: SimulationFailure) -> SimulationFailure:
        """Stamp a failure with this run's seed, step, time and replay command."""
        if failure.context is None:
            failure.context = self.run_context()
        return failure

    def _callback_failed(self, exc: BaseException, handle: asyncio.Handle) -> None:
        if isinstance(exc, SimulationFailure):
            self._record_failure(exc)
            return
        self.call_exception_handler(
            {"message": f"Exception in callback {handle!r}", "exception": exc, "handle": handle}
        )

    def _report_bug(self, bug: SimulatorBug) -> SimulatorBug:
        """A broken simulator contract (`_core.contract`) fails this run, stamped."""
        self._record_failure(bug)
        return bug

    def _record_failure(self, failure: SimulationFailure) -> None:
        """Keep the first failure; the run stops at the end of this iteration.

        On a loop other code holds (`new_event_loop`, the policy: a suite's),
        the failure first unwinds through the program, as an exception does on
        stock: the run goes on until the future being run is done, nothing is
        left to run, or `_UNWIND_STEPS` more steps, and then raises it. A
        runner that keeps one task across tests (anyio's) otherwise found that
        task still unwinding the test when it closed, and its cancellation
        landed in the middle: the task lived on and the close deadlocked
        (anyio's `test_thread_cancelled`), then the next test found the
        runner closed.
        """
        st = self._st
        if st.failure is None:
            st.failure = self._fail(failure)
            awaited = st.awaited
            if self._standalone and st.running and awaited is not None and not awaited.done():
                self._unwind_limit = st.step_limit
                st.set_step_limit(min(st.step_limit, st.steps + _UNWIND_STEPS))
            else:
                st.halt = True
            self._echoes.failed(failure)
        require(st.halt or self._unwind_limit is not None, "a failed run halts", failure=failure)

    # -- callbacks and timers -----------------------------------------------

    def call_soon(
        self,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimHandle:
        handle = _new_handle(SimHandle)  # fields set here: no __init__ frame per callback
        handle._callback = callback
        handle._args = args
        handle._cancelled = False
        handle._loop = self
        st = self._st
        # `cause`: the callback running now scheduled it (see _explore).
        if context is None:  # user code's call_soon: a plain callback
            handle.cause = st.steps
            handle._context = _copy_context()
        else:  # a task's step or wakeup, or a future's done callback
            cause = handle.cause = st.steps
            handle._context = context
            # Counted for the reorder's skip and its scan-free path (see LoopState),
            # unless nothing reads them: task order not explored, or lanes.
            if st.counting:
                kind = type(callback)
                if kind is STEP_TYPE or (
                    kind is C_METHOD and isinstance(callback.__self__, TASK_TYPES)  # type: ignore[attr-defined]
                ):  # a task's step or wakeup (a C task's), as the scan would class it
                    if cause != st.last_lone:  # the first its cause queued
                        st.last_lone = cause
                        st.lone += 1
                    else:
                        st.shared += 1
                else:
                    st.in_context += 1
        self._queue(handle)
        return handle

    def call_soon_threadsafe(
        self,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimHandle:
        """`call_soon`; from another thread while the loop runs, an escape (see `_threads`).

        From another thread before or between runs it queues the callback,
        which then runs at a fixed point: first thing in the next run. On a
        closed loop it raises, as asyncio's does: callers tell a loop that has
        gone by it (asgiref's `async_to_sync` then makes a loop of its own).
        """
        self._check_open()
        thread = self._st.thread
        if thread is not None and thread != _escapes._get_ident():
            if self._watch is None:
                raise self._host.escape(*_threads.foreign_call(threading.current_thread().name))
            handle = SimHandle(callback, args, self, context or _copy_context())
            self._watch.post(handle)  # taken when the loop has nothing ready (`_foreign`)
            return handle
        handle = self.call_soon(callback, *args, context=context)
        lane = _threadlanes.current()
        if lane is not None:  # a simulated thread called in: the loop may go first
            self._threads.yield_now(lane, "after loop.call_soon_threadsafe()")
        return handle

    def call_later(
        self,
        delay: float,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        try:
            when = self._st.clock.now + int(delay * _NS)
        except (OverflowError, ValueError):
            return self._never(delay, callback, args, context)
        return self._timer(when, callback, args, context)

    def call_at_ns(
        self,
        when_ns: int,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        """`call_at` with an integer deadline in virtual nanoseconds (exact, no floats)."""
        return self._timer(when_ns, callback, args, context)

    def _timer(
        self,
        when_ns: int,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        context: contextvars.Context | None,
    ) -> SimTimerHandle:
        """A timer at `when_ns`, `args` as a tuple: the loop's own callers pass them on
        so, since `*args` and `context=` cost a tuple, a dict and their unpacking per
        timer (`_coarse_call_later` builds its handle inline too: programs' timers
        on the default clock)."""
        handle = _new_handle(SimTimerHandle)  # as in call_soon: no __init__ frame
        handle._callback = callback
        handle._args = args
        handle._cancelled = False
        handle._loop = self
        handle._context = context if context is not None else _copy_context()
        handle._scheduled = True
        handle._when = when_ns / _NS
        handle.when_ns = when_ns
        heappush(self._st.timers, (when_ns, next(self._timer_numbers), handle))
        return handle

    def call_at(
        self,
        when: float,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        try:
            when_ns = int(when * _NS)
        except (OverflowError, ValueError):
            return self._never(when, callback, args, context)
        return self._timer(when_ns, callback, args, context)

    def _coarse_call_later(
        self,
        delay: float,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        """`call_later` on a coarse clock: the delay counts from the current
        tick's end, the time a coarse clock would read (see `_explore`)."""
        try:
            delay_ns = int(delay * _NS)
        except (OverflowError, ValueError):
            return self._never(delay, callback, args, context)
        st = self._st
        now, tick = st.clock.now, self._tick
        if delay_ns <= 0:  # due now: every loop runs it next iteration, whatever its clock
            return self._timer(now + delay_ns, callback, args, context)
        tick_end = -(-now // tick) * tick  # `round_up`, inlined: every program sleep comes here
        if not now <= tick_end < now + tick:
            broken("a coarse deadline is the first tick at or after it", when=now, tick=tick)
        when = tick_end + delay_ns
        handle = _new_handle(SimTimerHandle)  # `_timer`, inlined: the default clock's timers
        handle._callback = callback
        handle._args = args
        handle._cancelled = False
        handle._loop = self
        handle._context = context if context is not None else _copy_context()
        handle._scheduled = True
        handle._when = when / _NS
        handle.when_ns = when
        heappush(st.timers, (when, next(self._timer_numbers), handle))
        return handle

    def _coarse_call_at(
        self,
        when: float,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        """`call_at` on a coarse clock: the deadline moves by as much as the
        clock read late (`when` was computed from `time()`, which is exact).
        The network's deliveries and the world's own timers (`call_at_ns`,
        `call_later_exact`) stay exact: only the program's timers are coarse."""
        try:
            when_ns = int(when * _NS)
        except (OverflowError, ValueError):
            return self._never(when, callback, args, context)
        now, tick = self._st.clock.now, self._tick
        if when_ns <= now:  # already due: it runs next iteration (see _coarse_call_later)
            return self._timer(when_ns, callback, args, context)
        late = -(-now // tick) * tick - now  # `round_up`, inlined (every asyncio.timeout)
        if not 0 <= late < tick:
            broken("a coarse deadline is the first tick at or after it", when=now, tick=tick)
        return self._timer(when_ns + late, callback, args, context)

    def call_later_exact(
        self,
        delay: float,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        """`call_later` on the exact clock whatever `clock_resolution` says: the
        world's own timers (faults, disk latency, `Simulation.at`) are not a
        program reading a coarse clock. (A coarse clock replaces the instance's
        `call_later`/`call_at`; the class's stay exact.)"""
        try:
            when = self._st.clock.now + int(delay * _NS)
        except (OverflowError, ValueError):
            return self._never(delay, callback, args, context)
        return self._timer(when, callback, args, context)

    def call_at_exact(
        self,
        when: float,
        callback: Callable[[Unpack[Ts]], object],
        *args: *Ts,
        context: contextvars.Context | None = None,
    ) -> SimTimerHandle:
        """`call_at` on the exact clock (see `call_later_exact`)."""
        return SeedbedLoop.call_at(self, when, callback, *args, context=context)

    async def sleep_exact(self, delay: float) -> None:
        """`asyncio.sleep(delay)` on the exact clock (see `call_later_exact`)."""
        if delay <= 0:
            await asyncio.sleep(0)
            return
        waiter, handle = self.exact_waiter(delay)
        try:
            await waiter
        except BaseException:  # cancelled before the timer fired: it must not fire
            handle.cancel()  # (once it fired, the heap holds nothing to cancel)
            raise

    def exact_waiter(self, delay: float) -> tuple[asyncio.Future[None], SimTimerHandle]:
        """A future that a timer `delay` (> 0) seconds from now on the exact clock
        resolves, and that timer: `sleep_exact` without its coroutine, for a waiter
        that awaits the future in its own frame and cancels the timer if it is
        cancelled first (the disk's latency: one frame less per operation)."""
        waiter = self.create_future()
        try:
            when = self._st.clock.now + int(delay * _NS)
        except (OverflowError, ValueError):  # inf: a timer that never fires; NaN: refused
            return waiter, self._never(delay, _wake, (waiter,), None)
        return waiter, self._timer(when, _wake, (waiter,), None)

    def _never(
        self,
        when: float,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        context: contextvars.Context | None,
    ) -> SimTimerHandle:
        """A timer at +inf never fires (NaN is refused, as asyncio's heap would choke)."""
        if when != when:
            raise ValueError("a timer's delay cannot be NaN")
        handle = SimTimerHandle(
            0, callback, args, self, context if context is not None else _copy_context()
        )
        handle._when = float(when)
        handle._scheduled = False
        return handle

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        """Called by `TimerHandle.cancel()`; compacts the heap when it is mostly dead."""
        if not getattr(handle, "_scheduled", False):
            return  # already fired, or never scheduled: nothing left in the heap
        st = self._st
        st.cancelled_timers += 1
        if st.cancelled_timers > len(st.timers):
            broken("cancelled timers counted are in the heap", count=st.cancelled_timers)
        if st.cancelled_timers > 64 and st.cancelled_timers * 2 > len(st.timers):
            live = [entry for entry in st.timers if not entry[2]._cancelled]
            for entry in st.timers:
                if entry[2]._cancelled:
                    entry[2]._scheduled = False
            heapify(live)
            st.timers[:] = live
            st.cancelled_timers = 0
            require(
                all(entry[2]._scheduled for entry in live), "a compacted heap keeps live timers"
            )

    def time(self) -> float:
        return self._st.clock.now / _NS

    def __setattr__(self, name: str, value: Any) -> None:
        # Suites fake the clock with mock.patch.object(loop, "time", fake); the
        # default loop fires timers by self.time(), this one by its own clock,
        # so the fake would silently fire nothing. Refuse it where it happens.
        if name == "time":
            raise UsageError(_PATCHED_TIME)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name == "time":  # mock undoing the patch it could not apply: nothing to undo
            return
        object.__delattr__(self, name)

    # -- futures and tasks --------------------------------------------------

    def create_future(self) -> asyncio.Future[Any]:
        """A plain C future (`__init__` installs a faster equivalent on the instance).

        A subclass that hashes by creation number costs 12% of a sleep step
        (`bench/future_hash.py`: C tasks take their fast path only for exact
        futures), so futures stay plain; tasks do hash by number (see SimTask),
        which fixes the order of the sets asyncio builds (see `_ordering`).
        """
        return asyncio.Future(loop=self)

    def create_task(
        self,
        coro: Coroutine[Any, Any, T] | Generator[Any, None, T],
        *,
        name: str | None = None,
        context: contextvars.Context | None = None,
        **kwargs: Any,
    ) -> asyncio.Task[T]:
        self._check_open()
        if self._task_factory is not None:
            task: asyncio.Task[T] = self._task_factory(self, coro, context=context, **kwargs)
            if name is not None:
                task.set_name(name)
            return task
        return self._new_task(coro, name, context, kwargs)

    def _new_task(
        self,
        coro: Coroutine[Any, Any, T] | Generator[Any, None, T],
        name: str | None,
        context: contextvars.Context | None,
        kwargs: dict[str, Any],
    ) -> asyncio.Task[T]:
        """A task of this loop: numbered, named, in its node's lane, traced.

        Every task on the loop is made here: by `create_task` and, inside a
        run, by `asyncio.Task(...)` itself (eager tasks and eager task
        factories included), see `_taskclass`.
        """
        number = next(self._numbers)
        sim_task = SimTask.__new__(SimTask)
        sim_task.number = number  # before __init__: registration hashes the task
        sim_task.user_cancels = 0
        lane_var = self._st.lane_var
        if lane_var is None:
            sim_task.lane = None
        else:  # 3.11 tasks do not expose their context: remember their lane now
            sim_task.lane = lane_var.get() if context is None else context.get(lane_var)
        # Every task takes a default name from this loop's counter, named or
        # not, and the trace records it: 3.11 and 3.12 name a task after
        # creating it, 3.13 while creating it, and one trace must serve all
        # three. asyncio's own counter is process-wide: a name from it would
        # depend on the runs before this one. An explicit name, "" included,
        # is kept as stock asyncio keeps it.
        default_name = f"Task-{next(self._task_names)}"
        given = default_name if name is None else name
        _task_init(sim_task, coro, loop=self, name=given, context=context, **kwargs)
        self._st.tasks[number] = sim_task
        sim_task.add_done_callback(self._task_finished)
        self._st.trace.emit(
            "task", number, default_name, getattr(coro, "__qualname__", type(coro).__name__)
        )
        return sim_task

    def get_task_factory(self) -> Any:
        return self._task_factory

    def set_task_factory(self, factory: Any) -> None:
        self._task_factory = factory
