"""The loop's one face for a world: what `seedbed.world` and the layers above use.

A simulated world (and a scenario, its oracles, the assertion catalog) drives
the loop through `loop.driver`, a `WorldDriver`, and through the loop's
public asyncio methods; nothing outside `seedbed.aio` reads or writes the
loop's private state. This is the whole contract:

- `replay`: the command a failure prints to run this seed again (a world
  or a scenario knows it better than the loop does).
- `after_node_step`: called after each iteration in which a node's code
  ran (a scenario's continuous invariants); it must record a failure with
  `fail` rather than raise.
- `enable_lanes(var)` / `lanes_enabled`: interleave callbacks by the lane
  that the context variable `var` names (a node incarnation, see `_lanes`);
  `end_lane(lane)` ends one (its node crashed): its queued callbacks and the
  rest of a batch it is running never run, and its unfinished tasks leave the
  loop's and asyncio's registries, returned for the caller to keep referenced.
  `pause_lane(lane)` / `resume_lane(lane)` / `is_paused(lane)`: a paused
  lane keeps its queued callbacks, in order, and is not picked until resumed
  (a node stopped like a GC pause or a frozen VM); an ended lane never runs,
  paused or not.
- `now_ns`: virtual time, integer nanoseconds. `call_later(delay, cb, ...)`,
  `call_at(when, cb, ...)` and `sleep(delay)`: the world's own timers (fault episodes, disk latency,
  scheduled actions), always on the exact clock: a coarse `clock_resolution`
  models the program reading a coarse clock, not the world.
- `block(delay)`: the running callback blocks the thread (a blocking
  system call): virtual time moves on by `delay`.
- `set_wall_clock(fn)`: what `time.time()` reads inside the run.
- `fail(error)`: fail the run with `error` (the first failure wins; the run
  stops at the end of the iteration), even if the code around swallows it.
  `stamp(error)` adds the run's seed, step, time and replay command.
- `config` and `limit_time(max_time)`: the loop's options, and a time budget
  set after construction (a world's `run(max_time=...)`).
- `trace`, `emit(*event)`, `stream(name)`: the trace that hashes the run and
  the named entropy streams derived from its seed (one per name).
- `divergence`: the first difference from a recorded trace, if any.

The network plugs in with the loop's `install_network` (see `_io`).
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from seedbed._core import Stream, Trace, to_ns
from seedbed._core.contract import require
from seedbed._core.trace import Field
from seedbed.aio import _threadlanes
from seedbed.aio._digest import seal_run
from seedbed.aio._handles import SimTask
from seedbed.aio._state import LoopConfig, LoopState
from seedbed.errors import Nondeterminism, SimulationFailure

if TYPE_CHECKING:
    from seedbed.aio.loop import SeedbedLoop

F = TypeVar("F", bound=SimulationFailure)


class WorldDriver:
    """The driver face of one `SeedbedLoop` (see the module docstring)."""

    __slots__ = ("_loop", "_st", "exact_waiter")

    def __init__(self, loop: SeedbedLoop, st: LoopState) -> None:
        self._loop = loop
        self._st = st
        # `(future, timer) = exact_waiter(delay)`: `sleep` without its coroutine,
        # for a waiter that awaits the future in its own frame and cancels the
        # timer if it is cancelled first (see `SeedbedLoop.exact_waiter`).
        self.exact_waiter = loop.exact_waiter

    # -- naming and hooks ---------------------------------------------------

    @property
    def replay(self) -> str:
        """The replay command every failure of this run prints."""
        return self._st.replay

    @replay.setter
    def replay(self, command: str) -> None:
        self._st.replay = command

    @property
    def after_node_step(self) -> Callable[[], None] | None:
        return self._st.after_node_step

    @after_node_step.setter
    def after_node_step(self, hook: Callable[[], None] | None) -> None:
        require(not self._st.running, "the after-step hook is set before the loop runs")
        self._st.after_node_step = hook

    # -- lanes --------------------------------------------------------------

    def enable_lanes(self, lane_var: contextvars.ContextVar[Any]) -> None:
        """Interleave callbacks by the lane `lane_var` names, see `_lanes`."""
        require(not self._st.running, "lanes are enabled before the loop runs")
        self._st.lane_var = lane_var
        self._st.counting = False  # lanes scan every batch: the counts go unread

    @property
    def lanes_enabled(self) -> bool:
        return self._st.lane_var is not None

    def end_lane(self, lane: Any) -> list[SimTask]:
        """End `lane` (an object with `alive`): none of its callbacks runs again.

        Returns its unfinished tasks, now out of the loop's and asyncio's
        registries; the caller keeps them referenced (see `SeedbedLoop.bury`).
        """
        require(lane.alive, "a lane ends once", lane=lane)
        lane.alive = False
        router = self._st.router
        if router is not None:
            router.end(lane)
        self._loop._threads.end_node(lane)  # its threads die with it, and its executor
        self._loop._executors.pop(lane, None)
        tasks = self._loop.tasks_in_lane(lane)
        for task in tasks:
            self._loop.bury(task)
        return tasks

    def pause_lane(self, lane: Any) -> None:
        """Stop `lane` from running until `resume_lane`; needs lanes enabled."""
        require(self._st.lane_var is not None, "a lane pauses only in a loop with lanes")
        require(lane.alive and lane not in self._st.paused, "a live lane pauses once", lane=lane)
        self._st.paused[lane] = None

    def resume_lane(self, lane: Any) -> None:
        """Let a paused lane run again: its queue runs in the order it waited."""
        require(lane in self._st.paused, "only a paused lane resumes", lane=lane)
        del self._st.paused[lane]

    def is_paused(self, lane: Any) -> bool:
        return lane in self._st.paused

    @property
    def now_ns(self) -> int:
        """Virtual time in integer nanoseconds."""
        return self._st.clock.now

    def call_later(
        self, delay: float, callback: Callable[..., object], *args: Any,
        context: contextvars.Context | None = None,
    ) -> Any:  # fmt: skip
        return self._loop.call_later_exact(delay, callback, *args, context=context)

    def call_at(
        self, when: float, callback: Callable[..., object], *args: Any,
        context: contextvars.Context | None = None,
    ) -> Any:  # fmt: skip
        return self._loop.call_at_exact(when, callback, *args, context=context)

    def sleep(self, delay: float) -> Coroutine[Any, Any, None]:
        """`await driver.sleep(delay)`: the loop's exact sleep itself, not a coroutine
        around it (one frame less to resume per disk operation)."""
        return self._loop.sleep_exact(delay)

    def block(self, delay: float) -> None:
        """The running callback holds the loop's one thread for `delay` seconds (a
        blocking call: a disk operation of the Python file API). Virtual time
        moves on at once, as on a process stuck in a system call; every node
        waits, as they share the thread (timers that came due fire late, in
        deadline order). A simulated thread (`_threadlanes`) blocks alone: it
        parks for `delay` while the loop and other threads run."""
        require(delay >= 0, "a blocking call takes no negative time", delay=delay)
        lane = _threadlanes.current()
        if lane is not None:  # a simulated thread blocks alone: the loop runs on
            self._loop._threads.park(lane, f"blocking call ({delay!r}s)", None, to_ns(delay))
            return
        self._st.clock.now += to_ns(delay)

    def set_wall_clock(self, wall_clock: Callable[[int], int] | None) -> None:
        """Let a world decide what `time.time()` reads: virtual ns -> wall ns."""
        self._st.wall_clock = wall_clock

    # -- failing ------------------------------------------------------------

    def fail(self, failure: SimulationFailure) -> None:
        """Fail the run with `failure` (the first one wins), stamped with its context."""
        self._loop._record_failure(failure)

    def stamp(self, failure: F) -> F:
        """`failure` with this run's seed, step, time and replay command, to raise."""
        self._loop._fail(failure)
        return failure

    # -- options ------------------------------------------------------------

    @property
    def config(self) -> LoopConfig:
        return self._st.config

    def limit_time(self, max_time: float) -> None:
        """Set the run's time budget: past `max_time` virtual seconds it fails."""
        st = self._st
        require(not st.running, "the time budget is set before the loop runs")
        st.config = dataclasses.replace(st.config, max_time=max_time)  # as errors quote it
        st.time_limit = to_ns(max_time)
        st.wake_limit = min(st.wake_limit, st.time_limit)

    # -- trace and entropy --------------------------------------------------

    @property
    def trace(self) -> Trace:
        return self._st.trace

    def emit(self, *event: Field) -> None:
        """Fold one event into the run's trace."""
        self._st.trace.emit(*event)

    def seal(self, value: Any, failure: BaseException | None) -> None:
        """The world's run ended with `value` or `failure`: fold that, its step count
        and its end time into the trace (see `_digest.seal_run`), once."""
        st = self._st
        if not st.trace.sealed:
            seal_run(st.trace, st.steps, st.clock.now, value, failure)

    def stream(self, name: str) -> Stream:
        """The entropy stream `name` of this run (the same object for one name)."""
        return self._st.entropy.stream(name)

    @property
    def divergence(self) -> Nondeterminism | None:
        """The first event that differed from a recorded trace, if the run replays one."""
        return self._st.trace.divergence
