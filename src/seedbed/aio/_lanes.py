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
A lane in `LoopState.paused` (a paused node: `Simulation.pause`) keeps them
queued, in order, and is never picked until the world takes it out; while
every lane with work is paused, time moves on to the next timer.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from seedbed._core.trace import MASK, PRIME
from seedbed.aio._diagnose import deadlock_error
from seedbed.aio._explore import reorder_task_steps

if TYPE_CHECKING:
    from seedbed.aio._handles import SimHandle, SimTimerHandle
    from seedbed.aio._state import LoopState
    from seedbed.aio.loop import SeedbedLoop


class _Lane:
    __slots__ = ("key", "queue")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.queue: deque[SimHandle | SimTimerHandle] = deque()


def _key_of(lane: _Lane) -> Any:
    return lane.key


def drive_lanes(loop: SeedbedLoop, st: LoopState) -> None:
    """The scheduler of a world: like `SeedbedLoop._drive`, one lane at a time.

    It is the innermost loop of every simulation, so routing, picking, running
    and the common cases of collecting one due timer and waking for the next
    are inlined (the general cases stay in the loop's methods). Lanes are keyed
    by the lane object itself (an identity hash), never by `id()`, whose every
    call fires an audit event.
    """
    runnable: list[_Lane] = []  # lanes with queued callbacks, in the order they got work
    by_key: dict[Any, _Lane] = {}  # a lookup, never an order
    var = st.lane_var
    assert var is not None
    ready, timers, clock, trace, costs = st.ready, st.timers, st.clock, st.trace, st.costs
    pick = st.sched.below
    after_node_step = st.after_node_step
    explore = st.config.explore_tasks
    pct = st.pct
    paused = st.paused  # one dict for the whole run: empty unless a node is paused
    while True:
        if timers and timers[0][0] <= clock.now:
            entry = heappop(timers)
            if timers and timers[0][0] <= clock.now:
                heappush(timers, entry)  # several due: the general path orders ties
                loop._collect_due_timers()
            elif entry[2]._cancelled:
                entry[2]._scheduled = False
                st.cancelled_timers -= 1
            else:
                entry[2]._scheduled = False
                ready.append(entry[2])
        if st.parked:
            loop._resume_one_parked()
        if not runnable and len(ready) == 1 and not paused:
            # The common case in a world with latency: one callback ready in all
            # the world. Running it here is what routing it to its lane and then
            # picking that lane (a forced choice, no draw) would do, minus the
            # queues: the same costs, steps and trace.
            handle = ready.popleft()
            key = handle._context.get(var)
            if key is not None and not key.alive:
                by_key.pop(key, None)
                continue
            position = st.cost_position
            if position < st.cost_fence:
                st.cost_position = position + 1
                cost = costs[position]
            else:
                cost = loop._batch_costs(1, (handle,))[0]
            if not handle._cancelled:
                st.steps += 1
                clock.now += cost
                try:
                    handle._context.run(handle._callback, *handle._args)
                except (SystemExit, KeyboardInterrupt):
                    raise
                except BaseException as exc:
                    loop._callback_failed(exc, handle)
                if after_node_step is not None and key is not None:
                    after_node_step()
            if st.halt or clock.now > st.time_limit:
                loop._end_drive()
                break
            continue
        while ready:  # route each ready callback to its lane; a dead lane's never run
            handle = ready.popleft()
            key = handle._context.get(var)
            lane = by_key.get(key)
            if lane is None:
                if key is not None and not key.alive:
                    continue
                lane = by_key[key] = _Lane(key)
            if not lane.queue:
                runnable.append(lane)
            lane.queue.append(handle)
        choosable = runnable
        if paused and runnable:  # a paused lane keeps its queue and is not picked
            choosable = [lane for lane in runnable if lane.key not in paused]
        if choosable:
            if len(choosable) == 1:
                lane = choosable[0]
            elif pct is None:
                lane = choosable[pick(len(choosable), "which node runs next")]
            else:
                lane = choosable[pct.pick(choosable, _key_of)]
                pct.ran(lane.key)
            key = lane.key
            if key is not None and not key.alive:
                lane.queue.clear()
                runnable.remove(lane)
                del by_key[key]
                continue
            queue = lane.queue  # one asyncio iteration of this lane: what it had, FIFO
            if explore and len(queue) > 1:
                reorder_task_steps(queue, len(queue), st.sched, st.pct)
            start = st.cost_position
            end = start + len(queue)
            if end <= st.cost_fence:
                st.cost_position = end
                batch = costs[start:end]
            else:
                batch = loop._batch_costs(len(queue), queue)
            popleft = queue.popleft
            for cost in batch:
                handle = popleft()
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
            if not queue:
                runnable.remove(lane)
            if after_node_step is not None and key is not None:
                after_node_step()
            if st.halt or clock.now > st.time_limit:
                loop._end_drive()
                break
        elif st.halt:
            if st.failure is not None:
                raise loop._failure_to_raise()
            break
        elif timers and timers[0][0] <= st.wake_limit and not timers[0][2]._cancelled:
            clock.now = now = timers[0][0]  # the common case of _sleep_until_next_timer
            st.last_sleep_step = st.steps
            if trace.quiet:  # Trace.time, inlined
                trace.word = ((trace.word ^ now) * PRIME) & MASK
                trace.count += 1
            else:
                trace.time(now)
        elif not loop._sleep_until_next_timer():
            raise loop._fail(deadlock_error(st))
