"""Threads as seeded lanes: a program's threads run on the loop's one OS thread.

Each simulated thread is a greenlet, a child of the greenlet that runs the
loop (the hub). It runs in segments: the scheduler switches into it, it runs
until its next blocking point (a lock, a sleep, a wait: see `_lanesync`),
says how it will be woken (a lock's release, a timer) and switches back. So
a thread never runs at the same time as a callback, and between two
segments anything else may run: which one is the seed's choice.

The pick (`ThreadLanes.turn`, called by the loop's scheduler at the start of
an iteration while some thread is ready): among the ready threads and, if it
has work, the loop itself, the entropy draws who goes next. A segment is a
step like a callback: it counts, costs virtual CPU time and runs in its
node's context. With nothing else to run the pick among threads is forced
(one thread: no draw), so a program without threads draws nothing new.

A thread belongs to the node (lane) that started it; when that incarnation
ends (`end_node`), its threads never run again: their greenlets are kept,
suspended, in a graveyard, so no `finally` block of a dead process runs
against the next incarnation. When the loop closes, every unfinished thread
is ended at once (`kill`), outside the run, as unfinished tasks are closed.

Nothing here reads a real clock or a real thread id: a thread's ident is its
number in the run, and every choice is a labelled draw.
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import os
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

try:  # a declared dependency; a bare interpreter (PYTHONPATH=src) may lack it
    import greenlet
except ImportError:  # pragma: no cover
    greenlet = None

from seedbed._core.contract import broken, require
from seedbed.aio._handles import SimHandle
from seedbed.errors import UsageError

if TYPE_CHECKING:
    from seedbed.aio._state import LoopState
    from seedbed.aio.loop import SeedbedLoop

_NS = 1_000_000_000
#: Thread idents in a run: a fixed base plus the thread's number, so they read
#: like real idents (large, never 0) and never depend on memory addresses.
IDENT_BASE = 0x5EED_0000_0000
_real_get_ident = _thread.get_ident  # captured before any run rebinds it
_set_running_loop = asyncio.events._set_running_loop
_get_running_loop = asyncio.events._get_running_loop

READY, RUNNING, PARKED, DONE, DEAD = "ready", "running", "parked", "done", "dead"


class ThreadLane:
    """One simulated thread: its greenlet, its node and why it waits."""

    __slots__ = (
        "context", "glet", "held", "ident", "joiners", "node", "number", "reason", "state",
        "thread", "token", "waits_for",
    )  # fmt: skip

    def __init__(self, number: int, thread: Any, node: Any, context: contextvars.Context) -> None:
        self.number = number
        self.ident = IDENT_BASE + number
        self.thread = thread  # the `threading.Thread` this lane runs
        self.node = node  # the incarnation that started it (None outside a world)
        self.context = context  # where its segments run (a copy: never the greenlet's own)
        self.glet: greenlet.greenlet | None = None
        self.state = READY
        self.reason = ""  # why it is parked
        self.waits_for: Any = None  # the lock it waits for, if any
        self.token = 0  # bumped by every park: a stale timer never wakes a later one
        self.joiners: list[ThreadLane] = []
        self.held = 0  # lane locks it holds: no drawn switch before another acquire

    @property
    def name(self) -> str:
        return str(getattr(self.thread, "name", f"thread-{self.number}"))

    def runnable(self, paused: dict[Any, None]) -> bool:
        node = self.node
        return node is None or (node.alive and node not in paused)


# The lane whose segment runs now (None: the hub, or no run), and the lanes of
# the run on this OS thread. Plain globals: every stand-in checks them first.
_current: ThreadLane | None = None
_active: ThreadLanes | None = None


def current() -> ThreadLane | None:
    """The simulated thread running now, or None (the loop's own code, or no run)."""
    return _current


def active() -> ThreadLanes | None:
    """The thread lanes of the run active on this OS thread, if any (lanes mode)."""
    return _active


def on_run_thread() -> bool:
    """Whether the caller is on the OS thread of the active run (lanes mode)."""
    return _active is not None and _real_get_ident() == _active.st.thread


def activate(lanes: ThreadLanes | None) -> ThreadLanes | None:
    """Make `lanes` the active run's (None: none); return the previous value."""
    global _active
    previous, _active = _active, lanes
    return previous


class ThreadLanes:
    """One loop's simulated threads: who exists, who is ready, whose turn it is."""

    __slots__ = ("graveyard", "hub", "lanes", "locks", "loop", "names", "pools", "ready", "st")

    def __init__(self, loop: SeedbedLoop, st: LoopState) -> None:
        self.loop = loop
        self.st = st
        self.lanes: list[ThreadLane] = []  # every lane, in start order
        self.ready: list[ThreadLane] = st.thread_ready  # in the order they became ready
        self.graveyard: list[greenlet.greenlet] = []  # dead nodes' threads, never resumed
        self.hub: greenlet.greenlet | None = None
        self.locks = 0  # locks made in the run: their numbers in reports
        self.names: dict[str, int] = {}  # name template -> last number (Thread-%d...)
        # id of a thread pool made before the run -> (it, the pool made in the run
        # that does its work here: `_lanethreads._submit`)
        self.pools: dict[int, tuple[Any, Any]] = {}

    # -- starting and ending ---------------------------------------------------

    def start(self, body: Callable[[], None], thread: Any) -> ThreadLane:
        """A new ready lane running `body()`; it belongs to the calling node."""
        st = self.st
        lane_var = st.lane_var
        node = lane_var.get() if lane_var is not None else None
        context = contextvars.Context()  # a new thread starts with an empty context
        if lane_var is not None:  # ... but inside its node, as the process it runs in
            context.run(lane_var.set, node)
        if greenlet is None:
            raise UsageError(
                "simulated threads need the greenlet package (pip install greenlet), "
                'or run with threads="inline"'
            )
        lane = ThreadLane(len(self.lanes) + 1, thread, node, context)
        glet = greenlet.greenlet(self._body(lane, body))
        glet.gr_context = context.copy()  # its own: a context is entered once at a time
        lane.glet = glet
        self.lanes.append(lane)
        self.ready.append(lane)
        st.trace.emit("thread", lane.number, getattr(node, "name", ""))
        return lane

    def _body(self, lane: ThreadLane, body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            finally:
                self._finished(lane)

        return run

    def _finished(self, lane: ThreadLane) -> None:
        if lane.state is DEAD:
            return
        lane.state = DONE
        self.st.trace.emit("thread-end", lane.number)
        for joiner in lane.joiners:
            self.wake(joiner)
        lane.joiners.clear()

    def end_node(self, node: Any) -> None:
        """`node` crashed: its threads never run again (their `finally` never runs)."""
        for lane in self.lanes:
            if lane.node is node and lane.state is not DONE and lane.state is not DEAD:
                lane.state = DEAD
                if lane.glet is not None:
                    self.graveyard.append(lane.glet)
        self.ready[:] = [lane for lane in self.ready if lane.state is READY]

    def can_run(self) -> bool:
        """Whether some ready thread could run now (its node neither dead nor paused)."""
        paused = self.st.paused
        return any(lane.runnable(paused) for lane in self.ready)

    def close(self) -> list[ThreadLane]:
        """The loop closes: no lane runs again; returns those that had not finished
        (a crashed node's included), in start order, for `kill`."""
        unfinished = [lane for lane in self.lanes if lane.state is not DONE]
        for lane in unfinished:
            lane.state = DEAD
        self.ready.clear()
        self.graveyard.clear()  # their greenlets are the unfinished lanes' own
        self.hub = None  # an OS thread's main greenlet: never kept past the loop's life
        return unfinished

    # -- parking and waking ----------------------------------------------------

    def park(self, lane: ThreadLane, reason: str, waits_for: Any = None,
             timeout_ns: int | None = None) -> bool:  # fmt: skip
        """Suspend `lane` (the one running) until `wake`; True unless the timeout woke it."""
        require(lane is _current and lane.state is RUNNING, "only the running lane parks")
        lane.state = PARKED
        lane.reason = reason
        lane.waits_for = waits_for
        lane.token += 1
        timer = None
        if timeout_ns is not None:
            timer = self.loop.call_at_ns(
                self.st.clock.now + max(0, timeout_ns), self._timed_out, lane, lane.token
            )
        self._switch_out(lane)
        lane.waits_for = None
        if timer is None:
            return True
        timed_out = timer._scheduled is False and not timer._cancelled
        timer.cancel()
        return not timed_out

    def _timed_out(self, lane: ThreadLane, token: int) -> None:
        if lane.token == token and lane.state is PARKED:
            self.wake(lane)

    def wake(self, lane: ThreadLane) -> None:
        """Make a parked lane ready (once); anything may call it."""
        if lane.state is PARKED:
            lane.state = READY
            self.ready.append(lane)

    def others_could_run(self) -> bool:
        """Whether anything but the running lane could go now (a yield is a choice)."""
        st = self.st
        router = st.router
        return bool(self.ready or st.ready or (router is not None and router.runnable))

    def yield_now(self, lane: ThreadLane, reason: str) -> None:
        """A switch point: the running lane stays ready, the scheduler picks again."""
        if not self.others_could_run():
            return  # nothing else could go: the pick would be forced
        lane.state = READY
        lane.reason = reason
        self.ready.append(lane)
        self._switch_out(lane)

    def _switch_out(self, lane: ThreadLane) -> None:
        hub = self.hub
        require(hub is not None, "a lane runs under the hub that resumed it")
        assert hub is not None  # for mypy
        hub.switch()
        if lane.state is not RUNNING:
            broken("a lane resumes only when the scheduler runs it", state=lane.state)

    # -- the scheduler's turn --------------------------------------------------

    def pick(self, loop_has_work: bool) -> ThreadLane | None:
        """The lane to run next, or None (the loop goes); drawn from the seed."""
        st = self.st
        paused = st.paused
        if any(not lane.runnable(paused) for lane in self.ready):
            self.ready[:] = [lane for lane in self.ready if lane.state is READY]
            candidates = [lane for lane in self.ready if lane.runnable(paused)]
        else:
            candidates = self.ready
        k = len(candidates)
        if not k:
            return None
        if loop_has_work:
            index = st.sched.below(k + 1, "which thread runs next, or the loop")
            if index == k:
                return None
        else:
            index = st.sched.below(k, "which thread runs next") if k > 1 else 0
        lane = candidates[index]
        self.ready.remove(lane)
        return lane

    def segment(self, lane: ThreadLane) -> SimHandle:
        """The callback that runs `lane`'s next segment, in its node's context."""
        return SimHandle(self._resume, (lane,), self.loop, lane.context)

    def _resume(self, lane: ThreadLane) -> None:
        global _current
        if lane.state is not READY:
            broken("only a ready lane resumes", state=lane.state)
        glet = lane.glet
        assert glet is not None  # for mypy: set at start
        hub = self.hub = greenlet.getcurrent()
        glet.parent = hub  # where it returns when its body ends
        loop = _get_running_loop()
        lane.state = RUNNING
        _current = lane
        _set_running_loop(None)  # a thread has no running loop
        try:
            glet.switch()
        finally:
            _current = None
            _set_running_loop(loop)
        if glet.dead:  # let it go: it holds its parent, the main greenlet of this OS thread
            lane.glet = None
        require(lane.state is not RUNNING, "a lane leaves the CPU parked, ready or done")

    # -- reports -----------------------------------------------------------------

    def blocked(self) -> list[ThreadLane]:
        """The lanes parked now, in start order."""
        return [lane for lane in self.lanes if lane.state is PARKED]

    def describe(self) -> list[str]:
        """One line per parked thread: where it waits and on what."""
        return [f"    thread {lane.name!r}: {self._why(lane)}" for lane in self.blocked()]

    def _why(self, lane: ThreadLane) -> str:
        where = waiting_at(lane.glet.gr_frame if lane.glet is not None else None)
        what = lane.reason
        lock = lane.waits_for
        holder = getattr(lock, "holder", None)
        if holder is lane:
            what = "waiting to be notified (a Condition, Event, Queue or Future wait)"
        elif holder is not None:
            what = f"{what}, held by {describe_holder(holder)}"
        return f"waits at {where}: {what}"


#: Greenlets that would not die (code that catches `GreenletExit` and waits
#: again): kept for the life of the process, so the garbage collector never
#: resumes one inside a later run.
_UNDYING: list[greenlet.greenlet] = []
_KILL_TRIES = 3


def keep_undying(lanes: list[ThreadLane]) -> None:
    """Keep these lanes' greenlets for good, unkilled (see `_UNDYING`)."""
    _UNDYING.extend(lane.glet for lane in lanes if lane.glet is not None)


def kill(lanes: ThreadLanes, lane: ThreadLane) -> None:
    """End a dead lane's greenlet now: its `finally` blocks run here, outside the
    run (when the loop closes), with the lane stand-ins still in place, so a
    thread that catches the exit and waits again parks (and is thrown the exit
    again) instead of blocking the OS thread on a real lock."""
    global _current
    glet = lane.glet
    lane.glet = None
    if glet is None or glet.dead or not glet:  # finished, or never started: nothing runs
        return
    lanes.hub = glet.parent = greenlet.getcurrent()
    for _ in range(_KILL_TRIES):
        lane.state = RUNNING
        _current = lane
        try:
            glet.throw(greenlet.GreenletExit)
        except BaseException:  # a dying thread's complaint changes nothing
            pass
        finally:
            _current = None
            lane.state = DEAD
        if glet.dead:
            return
    _UNDYING.append(glet)


def describe_holder(holder: Any) -> str:
    """A lock holder as a report names it: a thread, or the loop's own code."""
    if isinstance(holder, ThreadLane):
        return f"thread {holder.name!r}"
    return "the event loop's thread"


_STDLIB = os.path.dirname(os.__file__)
_SEEDBED_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SITE = ("site-packages", "dist-packages")


def _library(filename: str) -> bool:
    if filename.startswith(_SEEDBED_DIR):
        return True
    return filename.startswith(_STDLIB) and not any(part in filename for part in _SITE)


def waiting_at(frame: FrameType | None) -> str:
    """'file:line in function' of the innermost user frame of a suspended thread."""
    innermost = None  # the innermost frame outside seedbed, if no user frame
    while frame is not None:
        code = frame.f_code
        if not _library(code.co_filename):
            return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
        if innermost is None and not code.co_filename.startswith(_SEEDBED_DIR):
            innermost = frame
        frame = frame.f_back
    if innermost is None:
        return "(not started)"
    code = innermost.f_code
    return f"{code.co_filename}:{innermost.f_lineno} in {code.co_name}"


def run_turn(lanes: ThreadLanes, loop_has_work: bool) -> bool:
    """The scheduler's thread turn: run one drawn lane's segment as a step, or
    return False (the loop goes). A segment counts, costs and fails like a callback."""
    st = lanes.st
    if st.halt:
        return False
    lane = lanes.pick(loop_has_work)
    if lane is None:
        return False
    handle = lanes.segment(lane)
    loop = lanes.loop
    position = st.cost_position
    if position < st.cost_fence:
        st.cost_position = position + 1
        cost = st.costs[position]
    else:
        cost = loop._batch_costs(1, (handle,))[0]
    st.steps += 1
    st.clock.now += cost
    try:
        handle._context.run(handle._callback, *handle._args)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        loop._callback_failed(exc, handle)
    if st.after_node_step is not None and lane.node is not None:
        st.after_node_step()
    return True
