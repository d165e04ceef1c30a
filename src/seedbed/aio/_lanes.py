"""Lanes: a world's nodes run as separate processes would, each FIFO.

When a world enables lanes, every ready callback is routed to the lane its
context names (a node incarnation; None for the world's own callbacks), and
the loop becomes one asyncio loop per lane sharing a clock:

- each lane keeps asyncio's promises for its own callbacks: FIFO, and an
  iteration runs the callbacks that lane had ready when the iteration began;
- which lane runs its next iteration is drawn from the entropy, uniformly
  among the lanes with ready work (a single candidate is a forced choice).
  So one node may run several iterations while another waits, as separate
  processes do, and nothing orders one node's callbacks against another's.

A lane (any object with an `alive` attribute) whose `alive` is False (a
crashed node) loses its queued callbacks: they never run and cost nothing.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from seedbed.aio._diagnose import budget_error, deadlock_error

if TYPE_CHECKING:
    from seedbed.aio._handles import SimHandle, SimTimerHandle
    from seedbed.aio._state import LoopState
    from seedbed.aio.loop import SeedbedLoop


class _Lane:
    __slots__ = ("key", "queue")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.queue: deque[SimHandle | SimTimerHandle] = deque()


class Lanes:
    """The per-lane ready queues, in order of each lane's first callback."""

    __slots__ = ("_by_key", "_lanes")

    def __init__(self) -> None:
        # Keyed by the lane object itself (identity hash): a lookup, never an order.
        # Not by id(): every id() call fires an audit event.
        self._by_key: dict[Any, _Lane] = {}
        self._lanes: list[_Lane] = []

    def sort_in(self, inbox: deque[SimHandle | SimTimerHandle], var: Any) -> None:
        """Move every handle from the shared ready queue to its lane."""
        by_key = self._by_key
        while inbox:
            handle = inbox.popleft()
            key = handle._context.get(var)
            lane = by_key.get(key)
            if lane is None:
                lane = by_key[key] = _Lane(key)
                self._lanes.append(lane)
            lane.queue.append(handle)

    def runnable(self) -> list[_Lane]:
        """Lanes with work; a dead lane is dropped with its queue (its key never returns)."""
        live = []
        dead = False
        for lane in self._lanes:
            key = lane.key
            if key is not None and not key.alive:
                dead = True
            elif lane.queue:
                live.append(lane)
        if dead:
            self._drop_dead()
        return live

    def _drop_dead(self) -> None:
        kept = [lane for lane in self._lanes if lane.key is None or lane.key.alive]
        self._lanes = kept
        self._by_key = {lane.key: lane for lane in kept}


def drive_lanes(loop: SeedbedLoop, st: LoopState) -> None:
    """The scheduler of a world: like `SeedbedLoop._drive`, one lane at a time."""
    lanes = Lanes()
    var = st.lane_var
    while True:
        if st.timers and st.timers[0][0] <= st.clock.now:
            loop._collect_due_timers()
        if st.parked:
            loop._resume_one_parked()
        lanes.sort_in(st.ready, var)
        runnable = lanes.runnable()
        if runnable:
            lane = runnable[st.sched.below(len(runnable), "which node runs next")]
            _run_iteration(loop, st, lane)
            if st.halt or st.clock.now > st.time_limit:
                if st.failure is not None:
                    raise loop._fail(st.failure)
                if st.clock.now > st.time_limit:
                    raise loop._fail(budget_error(st, f"max_time={st.config.max_time}s"))
                break
        elif st.halt:
            if st.failure is not None:
                raise loop._fail(st.failure)
            break
        elif not loop._sleep_until_next_timer():
            raise loop._fail(deadlock_error(st))


def _run_iteration(loop: SeedbedLoop, st: LoopState, lane: _Lane) -> None:
    """One asyncio iteration of one lane: the callbacks it had ready, FIFO."""
    queue = lane.queue
    key = lane.key
    clock = st.clock
    start = st.cost_position
    end = start + len(queue)
    if end <= st.cost_fence:
        st.cost_position = end
        costs = st.costs[start:end]
    else:
        costs = loop._batch_costs(len(queue))
    for cost in costs:
        handle = queue.popleft()
        if handle._cancelled or (key is not None and not key.alive):
            continue
        st.steps += 1
        clock.now += cost
        try:
            handle._context.run(handle._callback, *handle._args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            loop._callback_failed(exc, handle)
