"""The loop's options and its state, kept apart from the loop object.

A loop object with many attributes made every callback measurably slower, so
the simulator's state lives in one slotted object that the hot path holds in
a local variable.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from collections import deque
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from seedbed._core import Entropy, Stream, Trace, VirtualClock, to_ns
from seedbed.aio._handles import SimHandle, SimTask, SimTimerHandle
from seedbed.errors import SimulationFailure, UsageError

COST_TABLE_SIZE = 256  # callbacks per batch of virtual CPU costs drawn at once


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
    """

    cpu_cost_min: float = 1e-6
    cpu_cost_max: float = 5e-6
    timer_jitter_max: float = 0.0
    max_steps: int | None = None
    max_time: float | None = None
    strict: bool = False

    def __post_init__(self) -> None:
        for name in ("cpu_cost_min", "cpu_cost_max", "timer_jitter_max"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise UsageError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.cpu_cost_max < self.cpu_cost_min:
            raise UsageError(
                f"cpu_cost_max ({self.cpu_cost_max}) must be >= cpu_cost_min ({self.cpu_cost_min})"
            )
        if self.max_steps is not None and (
            not isinstance(self.max_steps, int) or self.max_steps < 1
        ):
            raise UsageError(f"max_steps must be a positive int or None, got {self.max_steps!r}")
        if self.max_time is not None and not (
            isinstance(self.max_time, int | float) and self.max_time > 0
        ):
            raise UsageError(f"max_time must be a positive number or None, got {self.max_time!r}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "cpu_cost_min": self.cpu_cost_min,
            "cpu_cost_max": self.cpu_cost_max,
            "timer_jitter_max": self.timer_jitter_max,
            "max_steps": self.max_steps,
            "max_time": self.max_time,
            "strict": self.strict,
        }


class LoopState:
    """Everything the loop mutates while it runs."""

    __slots__ = (
        "asyncgens",
        "cancelled_timers",
        "clock",
        "config",
        "cost_base",
        "cost_span",
        "costs",
        "entropy",
        "failure",
        "io_busy",
        "last_sleep_step",
        "next_number",
        "parked",
        "ready",
        "replay",
        "running",
        "sched",
        "step_limit",
        "steps",
        "stopping",
        "tasks",
        "time_limit",
        "timers",
        "trace",
        "user",
    )

    def __init__(self, seed: int, config: LoopConfig, trace: Trace) -> None:
        self.config = config
        self.trace = trace
        self.entropy = Entropy(seed, trace)
        self.sched: Stream = self.entropy.stream("loop")
        self.user: Stream = self.entropy.stream("user")
        self.clock = VirtualClock()
        self.ready: deque[SimHandle | SimTimerHandle] = deque()
        self.timers: list[tuple[int, int, SimTimerHandle]] = []
        self.cancelled_timers = 0
        self.parked: list[tuple[str, asyncio.Future[None]]] = []
        self.tasks: dict[int, SimTask] = {}
        self.asyncgens: WeakKeyDictionary[Any, contextvars.Context] = WeakKeyDictionary()
        self.next_number = 0
        self.steps = 0
        self.last_sleep_step = 0
        self.step_limit = config.max_steps if config.max_steps is not None else -1
        self.time_limit = to_ns(config.max_time) if config.max_time is not None else -1
        self.running = False
        self.stopping = False
        self.failure: SimulationFailure | None = None
        self.replay = f"seedbed.new_event_loop(seed={seed})"
        self.io_busy: Any = None  # a world's "is anything in flight?" probe
        self.cost_base = to_ns(config.cpu_cost_min)
        self.cost_span = to_ns(config.cpu_cost_max) - self.cost_base
        self.costs: list[int] = [0] * COST_TABLE_SIZE
        self.refill_costs()

    def refill_costs(self) -> None:
        """Draw the virtual CPU cost of the next COST_TABLE_SIZE callbacks at once.

        One labelled draw per batch keeps the per-callback cost to a list index.
        """
        bits = self.sched.raw(16 * COST_TABLE_SIZE)
        self.trace.emit("draw", "loop", "callback cpu costs", bits & ((1 << 64) - 1))
        base, span = self.cost_base, self.cost_span
        costs = self.costs
        for i in range(COST_TABLE_SIZE):
            costs[i] = base + ((bits >> (16 * i)) & 0xFFFF) * span // 0xFFFF

    def number(self) -> int:
        """The next creation number for a task or future."""
        n = self.next_number + 1
        self.next_number = n
        return n
