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
A lane ends through `end` (the driver's `end_lane`), which also cuts short
the batch it is running, if any: the rest of that batch never runs.
A lane in `paused` (a paused node: the driver's `pause_lane`) keeps its
queue, in order, and is never picked until the world resumes it; while every
lane with work is paused, time moves on to the next timer.

This module is only the pick step of the loop's one scheduler
(`SeedbedLoop._drive`): it decides which queue the next iteration runs and
never runs a callback itself.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from seedbed._core.contract import broken, require

if TYPE_CHECKING:
    from seedbed.aio._handles import SimHandle, SimTimerHandle
    from seedbed.aio._state import LoopState

Queue = deque["SimHandle | SimTimerHandle"]


class _Lane:
    __slots__ = ("key", "queue")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.queue: Queue = deque()


def _key_of(lane: _Lane) -> Any:
    return lane.key


class LaneRouter:
    """Routes ready callbacks to their lanes and picks the lane that runs next.

    One router serves a loop from its first drive on: what the lanes hold when
    one drive stops (a world's `advance`) runs in the next. Lanes are keyed by
    the lane object itself (an identity hash, a lookup only, never an order),
    never by `id()`, whose every call fires an audit event.
    """

    __slots__ = (
        "batch", "by_key", "key", "lane", "lane_at", "paused", "pct", "pick_index", "ready",
        "runnable", "var",
    )  # fmt: skip

    def __init__(self, st: LoopState) -> None:
        require(st.lane_var is not None, "a lane router serves a loop with lanes")
        assert st.lane_var is not None  # for mypy: require does not narrow
        self.var = st.lane_var
        self.ready = st.ready
        self.pick_index = st.sched.below
        self.pct = st.pct
        self.paused = st.paused  # one dict for the whole run: empty unless a node is paused
        self.runnable: list[_Lane] = []  # lanes with queued callbacks, in the order they got work
        self.by_key: dict[Any, _Lane] = {}
        self.key: Any = None  # the lane of the callbacks `pick` handed out
        self.lane: _Lane | None = None  # the lane whose batch runs now, if a lane batch
        # Its index in `runnable`: a lane whose batch empties it leaves by index, where
        # `runnable.remove` compared it with every lane ahead of it (a world of
        # thousands of nodes starts with as many lanes runnable at once).
        self.lane_at = -1
        self.batch: list[int] = []  # that batch's costs: cleared to cut it short

    def pick(self) -> Queue | None:
        """The queue the next iteration runs, or None to begin the iteration again.

        A lane's queue (`lane` and `key` set) when lanes hold work; an empty
        `ready` when nothing is runnable. The scheduler does not call it when
        `ready` holds the only callback in all the world and no lane holds
        any (the common case with latency): routing that one to its lane and
        picking the lane would be a forced choice, so it runs from `ready`,
        at the same cost, steps and trace.
        """
        ready, runnable, by_key, var = self.ready, self.runnable, self.by_key, self.var
        self.lane = None
        popleft = ready.popleft
        while ready:  # route each ready callback to its lane; a dead lane's never run
            handle = popleft()
            lane_key = handle._context.get(var)
            lane = by_key.get(lane_key)
            if lane is None:
                if lane_key is not None and not lane_key.alive:
                    continue
                lane = by_key[lane_key] = _Lane(lane_key)
            if not lane.queue:
                runnable.append(lane)
            lane.queue.append(handle)
        choosable = runnable
        if self.paused and runnable:  # a paused lane keeps its queue and is not picked
            choosable = [lane for lane in runnable if lane.key not in self.paused]
        if not choosable:
            return ready  # empty: the iteration goes on to the timers
        if len(choosable) == 1:
            at = 0
        elif self.pct is None:
            at = self.pick_index(len(choosable), "which node runs next")
        else:
            at = self.pct.pick(choosable, _key_of)
            self.pct.ran(choosable[at].key)
        lane = choosable[at]
        if choosable is not runnable:
            at = runnable.index(lane)  # lanes compare by identity
        if lane.key in self.paused:
            broken("a paused lane is never picked", lane=lane.key)
        if not lane.queue:
            broken("a runnable lane has queued work", lane=lane.key)
        key = self.key = lane.key
        if key is not None and not key.alive:
            lane.queue.clear()
            del runnable[at]
            del self.by_key[key]
            return None
        self.lane = lane
        self.lane_at = at
        return lane.queue

    def settle(self) -> None:
        """After a lane's batch that left callbacks queued (the step budget cut
        it): the lane stays runnable. (A lane whose batch emptied it leaves
        `runnable`; the scheduler does that inline.)"""
        lane = self.lane
        require(lane is not None and lane.queue, "a lane settles after its own batch")
        assert lane is not None  # for mypy: require does not narrow
        if lane.key is not None and not lane.key.alive:
            broken("a dead lane keeps no queued callbacks", lane=lane.key)
        self.lane = None

    def end(self, key: Any) -> None:
        """Lane `key` died (its node crashed): if it is running a batch, cut it short.

        Clearing the batch's cost list stops the scheduler's loop over it (a
        list iterator checks the length each step); the callbacks left in the
        queue are dropped, as a dead lane's always are, with their costs spent
        and no step counted, exactly as if each had been skipped.
        """
        lane = self.lane
        require(key is not None, "the world's own lane never ends")
        if lane is not None and lane.key is key:
            self.batch.clear()
            lane.queue.clear()
