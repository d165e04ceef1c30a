"""The loop's options and its state, kept apart from the loop object.

A loop object with many attributes made every callback measurably slower, so
the simulator's state lives in one slotted object that the hot path holds in
a local variable.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from seedbed._core import Entropy, Stream, Trace, VirtualClock, to_ns
from seedbed._core.contract import require
from seedbed._core.validate import (
    check_at_least,
    check_bool,
    check_choice,
    check_positive_int,
    check_seconds,
)
from seedbed.aio._asyncgens import AsyncGenTracker
from seedbed.aio._collect import collect_at
from seedbed.aio._handles import SimHandle, SimTask, SimTimerHandle
from seedbed.aio._lanes import LaneRouter
from seedbed.aio._pct import Pct
from seedbed.aio._pos import Pos
from seedbed.errors import SimulationFailure, UsageError

COST_TABLE_SIZE = 256  # callbacks per batch of virtual CPU costs drawn at once
UNLIMITED = 1 << 62  # a budget no run reaches: ~146 virtual years, or steps


@dataclass(frozen=True)
class LoopConfig:
    """How a deterministic loop explores. Validated on construction.

    - `cpu_cost_min`/`cpu_cost_max`: virtual seconds each callback costs, drawn
      per callback from the entropy. Without a cost, `while True: await
      asyncio.sleep(0)` never lets virtual time reach a timeout.
    - `timer_jitter_max`: when the loop wakes for a timer it may stall up to
      this long first (a late loop, as under load). All timers stay in
      deadline order; a deadline is a lower bound.
    - `max_steps`/`max_time`: budgets; exceeding one raises `BudgetExceeded`.
    - `strict`: a task that swallows its cancellation fails the run instead of
      warning.
    - `explore_tasks` (on by default): the order of task steps ready in one
      iteration is drawn from the seed (plain callbacks keep `call_soon`
      order, and the steps one callback scheduled keep its order); see
      `_explore`.
    - `strategy`: "random" (every choice a uniform draw), "pct": lane picks
      and, with `explore_tasks`, task-step order follow PCT with `pct_depth`
      d and `pct_steps` k, the expected number of contested choices (both
      drawn for each run when left None, the default: nothing to tune; see
      `_pct`), or "pos": they follow partial-order sampling, each pending
      event ranked by a random priority redrawn once it ran (see `_pos`).
    - `threads`: "lanes" (the default): a thread's work (`threading.Thread`,
      `asyncio.to_thread`, `run_in_executor`, `ThreadPoolExecutor`) runs as
      a simulated thread of its node, switching at blocking points, the seed
      picking who runs next (see `_threadlanes`); "inline": executor work
      runs at once on the loop's thread and starting a thread is refused.
    - `clock_resolution` (1 ms by default; 0: exact nanoseconds): the
      program's timers count their delay from the end of the current tick of
      this many seconds, as on a coarse real clock, so timers set within one
      tick for one delay tie and fire in a seeded order; a timer never fires
      early. The world's own timers stay exact; see `_explore`.
    """

    cpu_cost_min: float = 1e-6
    cpu_cost_max: float = 5e-6
    timer_jitter_max: float = 0.0
    max_steps: int | None = None
    max_time: float | None = None
    strict: bool = False
    explore_tasks: bool = True
    clock_resolution: float = 0.001
    strategy: str = "random"
    pct_depth: int | None = None
    pct_steps: int | None = None
    threads: str = "lanes"

    def __post_init__(self) -> None:
        check_bool("LoopConfig", "explore_tasks", self.explore_tasks)
        check_choice("LoopConfig", "threads", self.threads, ("lanes", "inline"))
        self._check_strategy()
        check_seconds("LoopConfig", "clock_resolution", self.clock_resolution, allow_zero=True)
        if 0 < self.clock_resolution < 1e-9:  # no tick finer than the clock's nanosecond
            raise UsageError(
                "LoopConfig.clock_resolution must be 0 or at least 1e-09 seconds (the "
                f"clock's nanosecond), got {self.clock_resolution!r}"
            )
        for name in ("cpu_cost_min", "cpu_cost_max", "timer_jitter_max"):
            check_seconds("LoopConfig", name, getattr(self, name), allow_zero=True)
        check_at_least(
            "LoopConfig", "cpu_cost_max", self.cpu_cost_max, "cpu_cost_min", self.cpu_cost_min
        )
        if self.max_steps is not None:  # None: no step budget
            check_positive_int("LoopConfig", "max_steps", self.max_steps)
        if self.max_time is not None:  # None: no time budget
            check_seconds("LoopConfig", "max_time", self.max_time, allow_zero=False)
        check_bool("LoopConfig", "strict", self.strict)

    def _check_strategy(self) -> None:
        check_choice("LoopConfig", "strategy", self.strategy, ("random", "pct", "pos"))
        for name in ("pct_depth", "pct_steps"):
            if getattr(self, name) is not None:  # None: drawn for each run
                check_positive_int("LoopConfig", name, getattr(self, name))
        if self.strategy != "pct" and (self.pct_depth, self.pct_steps) != (None, None):
            raise UsageError(
                'LoopConfig.pct_depth and pct_steps apply only with strategy="pct"; '
                'add strategy="pct" or drop them'
            )

    def changed(self) -> dict[str, Any]:
        """The options that differ from their defaults (what a replay must repeat)."""
        default = LoopConfig().as_dict()
        return {key: value for key, value in self.as_dict().items() if value != default[key]}

    def as_dict(self) -> dict[str, Any]:
        return {
            "cpu_cost_min": self.cpu_cost_min,
            "cpu_cost_max": self.cpu_cost_max,
            "timer_jitter_max": self.timer_jitter_max,
            "max_steps": self.max_steps,
            "max_time": self.max_time,
            "strict": self.strict,
            "explore_tasks": self.explore_tasks,
            "clock_resolution": self.clock_resolution,
            "strategy": self.strategy,
            "pct_depth": self.pct_depth,
            "pct_steps": self.pct_steps,
            "threads": self.threads,
        }


@functools.lru_cache(maxsize=16)
def _cost_levels(base: int, span: int) -> tuple[int, ...]:
    """The 256 evenly spaced callback costs of a range: the same for every run of
    one configuration, so computed once, not once per loop (issue 30)."""
    return tuple(base + level * span // 255 for level in range(256))


class LoopState:
    """Everything the loop mutates while it runs."""

    __slots__ = (
        "after_node_step",
        "asyncgens",
        "awaited",
        "cancelled_timers",
        "clock",
        "config",
        "cost_base",
        "cost_fence",
        "cost_levels",
        "cost_position",
        "cost_span",
        "costs",
        "counting",
        "entropy",
        "failure",
        "halt",
        "in_context",
        "lane_var",
        "last_lone",
        "last_sleep_step",
        "lone",
        "looked_until",
        "parked",
        "paused",
        "pct",
        "ready",
        "refills",
        "replay",
        "router",
        "running",
        "sched",
        "shared",
        "sleep_tail",
        "step_limit",
        "steps",
        "stopping",
        "tail_at",
        "tasks",
        "thread",
        "thread_ready",
        "time_limit",
        "timers",
        "trace",
        "user",
        "wake_limit",
        "wall_clock",
    )

    def __init__(self, seed: int, config: LoopConfig, trace: Trace) -> None:
        self.config = config
        self.trace = trace
        self.entropy = Entropy(seed, trace)
        self.sched: Stream = self.entropy.stream("loop")
        self.user: Stream = self.entropy.stream("user")
        self.pct: Pct | None = None
        if config.strategy == "pct":
            self.pct = Pct(self.entropy.stream("pct"), config.pct_depth, config.pct_steps)
        elif config.strategy == "pos":  # the same hooks: a Pct that re-ranks what ran
            self.pct = Pos(self.entropy.stream("pos"))
        self.clock = VirtualClock()
        self.ready: deque[SimHandle | SimTimerHandle] = deque()
        # Callbacks `call_soon` queued with a context (every task step has
        # one) since a batch was last looked at for task-order exploration.
        # A task's `__step`s and wakeups: `lone` the first of their cause
        # (`last_lone`: the last one's cause; causes only grow), `shared` the
        # others; `in_context` counts the rest (a future's plain callbacks).
        # `sleep_tail` timers of `asyncio.sleep`s only (plain callbacks)
        # joined the queue's end when the step count was `tail_at`.
        # `looked_until` is the step count when the batch last looked at ran
        # out (-1 after a callback left the queue without running): while the
        # count still says so, nothing has left the queue since, and a queue as
        # long as the task callbacks and the tail holds exactly those, in the
        # order they were queued (see _drive_with).
        self.in_context = self.lone = self.shared = 0
        self.counting = config.explore_tasks  # whether `call_soon` keeps them
        self.last_lone = -1
        self.sleep_tail = 0
        self.tail_at = -1
        self.looked_until = -1
        self.timers: list[tuple[int, int, SimTimerHandle]] = []
        self.cancelled_timers = 0
        self.parked: list[tuple[str, asyncio.Future[None]]] = []
        # The simulated threads ready to run (`_threadlanes`): one list for the
        # loop's life, which the scheduler checks at every iteration.
        self.thread_ready: list[Any] = []
        # Lanes (node incarnations) that must not run now: a paused node's
        # callbacks wait in its lane until the world resumes it (a lookup).
        self.paused: dict[Any, None] = {}
        self.tasks: dict[int, SimTask] = {}
        self.asyncgens = AsyncGenTracker()
        self.steps = 0
        self.last_sleep_step = 0
        # No budget is an unreachable one, so the hot path needs no None checks.
        self.step_limit = config.max_steps if config.max_steps is not None else UNLIMITED
        self.time_limit = to_ns(config.max_time) if config.max_time is not None else UNLIMITED
        # The fast path of waking for a timer applies below this deadline: past
        # the time budget, or with jitter to draw, the general path runs.
        self.wake_limit = -1 if config.timer_jitter_max else self.time_limit
        self.running = False
        self.thread: int | None = None  # the ident of the thread running the loop
        self.stopping = False
        self.halt = False  # stopping or failed: the loop leaves after this iteration
        self.awaited: asyncio.Future[Any] | None = None  # what run_until_complete runs
        self.lane_var: contextvars.ContextVar[Any] | None = None  # set by a world
        self.router: LaneRouter | None = None  # the lanes' pick step, from the first drive on
        self.wall_clock: Callable[[int], int] | None = None  # set by a world
        self.failure: SimulationFailure | None = None
        # Called after each iteration in which a node's code ran (a scenario's
        # continuous invariants); it records a failure rather than raising.
        self.after_node_step: Callable[[], None] | None = None
        self.replay = f"seedbed.new_event_loop(seed={seed})"
        self.cost_base = to_ns(config.cpu_cost_min)
        self.cost_span = to_ns(config.cpu_cost_max) - self.cost_base
        require(self.cost_base >= 0 and self.cost_span >= 0, "callback costs are never negative")
        # A list: `list.__getitem__` is a C method the refill's `map` calls directly,
        # where a tuple's is a slot wrapper called through a method-wrapper object
        # (+210 instructions a step, every step of every run: issue 50).
        self.cost_levels = list(_cost_levels(self.cost_base, self.cost_span))
        self.costs: list[int] = [0] * COST_TABLE_SIZE
        self.cost_position = 0
        self.cost_fence = 0
        self.refills = 0  # the first refill, here, is before the run: no collection
        trace.bind(self)  # every event from here on is placed at this loop's step and time
        self.refill_costs()
        self.place_cost_fence(self.step_limit)

    def refill_costs(self) -> None:
        """Draw the virtual CPU cost of the next COST_TABLE_SIZE callbacks at once.

        One labelled draw per batch keeps the per-callback cost to a list index;
        each callback gets one of 256 evenly spaced costs in the configured range.
        """
        require(self.cost_position in (0, COST_TABLE_SIZE), "costs refill once all are taken")
        if self.refills:
            collect_at(self.refills)  # a point fixed by the step count, see _collect
        self.refills += 1
        bits = self.sched.raw(8 * COST_TABLE_SIZE, "callback cpu costs")
        self.trace.emit("draw", "loop", "callback cpu costs", bits & ((1 << 64) - 1))
        self.costs[:] = map(self.cost_levels.__getitem__, bits.to_bytes(COST_TABLE_SIZE, "little"))
        require(len(self.costs) == COST_TABLE_SIZE, "the cost table keeps its size")

    def place_cost_fence(self, steps_left: int) -> None:
        """Where the loop's fast path must stop taking costs: the table's end, or
        the step budget, whichever comes first."""
        require(0 <= self.cost_position <= COST_TABLE_SIZE, "the cost position stays in the table")
        self.cost_fence = min(COST_TABLE_SIZE, self.cost_position + steps_left)

    def set_step_limit(self, limit: int) -> None:
        require(limit >= 0, "a step budget is never negative", limit=limit)
        self.step_limit = limit
        self.place_cost_fence(limit - self.steps)

    def take_costs(self, n: int) -> list[int]:
        """The virtual CPU costs of the next `n` callbacks, in order."""
        require(n > 0, "costs are taken for at least one callback", n=n)
        start = self.cost_position
        end = start + n
        if end <= COST_TABLE_SIZE:
            self.cost_position = end
            return self.costs[start:end]
        taken = self.costs[start:]
        self.cost_position = COST_TABLE_SIZE  # the rest of this table is taken
        while len(taken) < n:
            self.refill_costs()
            more = min(COST_TABLE_SIZE, n - len(taken))
            taken += self.costs[:more]
            self.cost_position = more
        require(len(taken) == n, "every callback of a batch gets its cost", n=n, got=len(taken))
        return taken
