"""`seedbed.Simulation`: many named nodes in one process, on one seeded loop.

Hosts run for the whole simulation (and again after a restart); clients run
once, and the run ends when every client has returned. A node's (or a
scheduled action's) exception fails the run, with the seed in the error.
Control verbs (`crash`, `restart`, `bounce`, and the network's `partition`,
`repair`, `hold`, `release`, `isolate`, `heal`, `random_halves`) work from
the test between steps (`advance`), from an action scheduled with `at`, and
from a task inside the run. `isolate` and `random_halves` are patterns over
the hosts (or `among=`): each replaces the last unless `add=True`; `cuts()`
says which links drop traffic (see `seedbed.net._links`).

Every node has a simulated disk (`disk=DiskConfig(...)` sets its faults) and
the world has one network (`network=NetworkConfig(...)`). `interleave=False`
puts all nodes on one FIFO queue, as if they shared a process; other keyword
options are `LoopConfig` fields (CPU costs, timer jitter, budgets, strict).

`trace=PATH` records the run's events as JSON Lines (as `seedbed.run` does);
`replay=PATH` checks a run of the same setup against a recording and raises
`Nondeterminism` at the first event that differs.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from seedbed._core import Trace, to_ns
from seedbed._core.identity import NODE
from seedbed._core.trace import Event
from seedbed._core.tracefile import RecordedTrace, TraceWriter
from seedbed._core.validate import MAX_SECONDS, check_bool
from seedbed.aio import _ordering
from seedbed.aio._state import LoopConfig
from seedbed.aio.loop import SeedbedLoop
from seedbed.aio.runner import (
    abandon_pending,
    check_ending,
    check_result,
    check_seed,
    note_python_version,
    raise_defect_after,
    trace_header,
    write_run_trace,
)
from seedbed.errors import (
    Nondeterminism,
    RunContext,
    UsageError,
    attach_context,
)
from seedbed.fs import DiskConfig, FaultCoordinator, SimDisk
from seedbed.fs._image import restore
from seedbed.net import NetworkConfig, SimNetwork
from seedbed.net._links import LinkState, LinkTraffic
from seedbed.world import _disks
from seedbed.world._clocks import ClockConfig, draw_clock, jump, skew, wall_ns
from seedbed.world._disk_faults import ERROR_KINDS, DiskFaults
from seedbed.world._nodes import CLIENT, HOST, Node, NodeTable
from seedbed.world._operations import AFTER, BEFORE, DISK_OPS, OPERATIONS, OperationCrash
from seedbed.world._params import Params
from seedbed.world._process import check_isolate, isolated_main, warn_if_prebuilt


@dataclass(frozen=True)
class SimulationResult:
    """A finished simulation: each client's return value, and how to get back here."""

    values: dict[str, Any]
    seed: int
    trace_hash: str
    steps: int
    virtual_time: float


class Simulation:
    """A world of named nodes on virtual time, every choice drawn from `seed`."""

    def __init__(
        self,
        seed: int,
        *,
        clock: ClockConfig | None = None,
        network: NetworkConfig | None = None,
        disk: DiskConfig | None = None,
        interleave: bool = True,
        trace: str | Path | None = None,
        replay: str | Path | None = None,
        disks: str | Path | None = None,
        **loop_options: Any,
    ) -> None:
        self.seed = check_seed(seed)
        _check_components(clock=clock, network=network, disk=disk, interleave=interleave)
        config = _loop_config(loop_options)
        self._trace_path = trace
        self._recorded = self._read_recording(replay)
        events = cast(Sequence[Event], self._recorded.events) if self._recorded else None
        self._loop = SeedbedLoop(self.seed, config, Trace(keep=trace is not None, expected=events))
        self._driver = self._loop.driver  # the loop's face for a world: nothing private
        self._driver.replay = f"seedbed.Simulation(seed={self.seed}) with the same setup"
        if interleave:
            self._driver.enable_lanes(NODE)
        self._driver.set_wall_clock(wall_ns)
        self._clock = clock or _DEFAULT_CLOCK
        self._world = contextvars.Context()  # the world's own code runs in no node
        self._nodes = NodeTable()
        self._failed: asyncio.Future[None] = self._loop.create_future()
        self._failed_node: str | None = None  # the node whose main raised the run's failure
        self._overtaken: list[asyncio.Future[Any]] = []  # work a failure won the race against
        self._started = False
        self._finished = False
        self._disk_config = disk or _DEFAULT_DISK
        self._coordinator = FaultCoordinator()
        self._disk_faults = DiskFaults()  # disks degraded by `degrade_disk`
        self._armed: dict[str, OperationCrash] = {}  # operation crashes by node (a lookup)
        self._network = self._make_network(network)
        self.params = Params()  # world parameters; a swarm scenario draws them per seed
        # The hosts a scenario's liveness phase healed while the others kept failing
        # (`Scenario(liveness_core=...)`); None in every other run.
        self.liveness_core: tuple[str, ...] | None = None
        self.trace_header: dict[str, Any] = {}  # more for the trace file's header (a scenario's)
        if disks is None:
            disks = _disks.load_request()
        self._images = _disks.load(disks) if disks is not None else {}  # saved disks to start on
        if disks is not None:
            self.trace_header["disks"] = str(disks)

    # -- building the world -------------------------------------------------

    def host(
        self, name: str, main: Callable[[], Any], *, isolate: Sequence[str] | None = None
    ) -> None:
        """Add a host: `main()` runs at the start and again after each restart, a fresh
        process each time; `isolate` names packages it gets its own copies of
        (imported afresh at each start: their module globals and class attributes
        are this node's, see `seedbed.world._process`)."""
        self._add(name, HOST, main, isolate)

    def client(
        self, name: str, main: Callable[[], Any], *, isolate: Sequence[str] | None = None
    ) -> None:
        """Add a client: `main()` runs once; the run ends when every client returned.
        `isolate` as for `host`."""
        self._add(name, CLIENT, main, isolate)

    def _add(
        self, name: str, kind: str, main: Callable[[], Any], isolate: Sequence[str] | None
    ) -> None:
        if self._finished:
            raise UsageError("this simulation has finished; make a new one")
        modules = check_isolate(isolate, name)
        if callable(main):
            warn_if_prebuilt(name, main, stacklevel=3)
        disk, result = self._make_disk(name), self._loop.create_future()
        image = self._images.get(name)
        if image is not None:  # the node's machine powers on with its saved disk
            restore(disk, image)
            self._driver.emit("disk image", name, image.digest())
        node = Node(name, kind, main, disk, result, modules)
        self._nodes.add(node)
        self._network.address_of(name)  # its name resolves from now on
        if self._started:
            self._start(node)

    def at(self, when: float, action: Callable[[], Any]) -> None:
        """Run `action()` (a function or an async function) at virtual time `when`."""
        if not callable(action):
            raise UsageError(f"at() needs a callable action, got {action!r}")
        self._driver.call_at(when, self._run_action, action, context=self._world)

    def _run_action(self, action: Callable[[], Any]) -> None:
        try:
            result = action()
        except Exception as exc:  # a broken action fails the run like a broken node
            self._fail(exc)
            return
        if inspect.isawaitable(result):
            task = self._loop.create_task(_awaiting(result), context=self._world.copy())
            task.add_done_callback(self._node_finished_outside_a_node, context=self._world)

    # -- control ------------------------------------------------------------

    def crash(self, name: str) -> bool:
        """Crash a node now. False if it was not running."""
        node = self._nodes.get(name)
        if not node.up:
            return False
        self._nodes.bury(self._driver, node)
        self._disarm(node)
        self._network.node_crashed(name)
        if node.disk is not None:
            node.disk.crash()
        self._driver.emit("crash", name, node.incarnation)
        return True

    def restart(self, name: str) -> bool:
        """Start a crashed host or client again, with only what its disk kept."""
        node = self._nodes.get(name)
        if node.up or not self._started:
            return False
        self._start(node)
        return True

    def stop(self, name: str) -> bool:
        """Stop a node's process while its machine stays up (a deploy's stop, a kill):
        what it wrote reaches the disk (the kernel writes its page cache back, and
        nothing is torn), what sat in its own buffers does not, and it runs nothing
        more. False if it was not running. `restart` starts it again."""
        node = self._nodes.get(name)
        if not node.up:
            return False
        if node.disk is not None:
            node.disk.sync()
        self._driver.emit("stop", name, node.incarnation)
        return self.crash(name)  # with nothing unsynced, the crash loses nothing on disk

    def set_main(self, name: str, main: Callable[[], Any]) -> Callable[[], Any]:
        """Give node `name` another main from its next start on: new code on the same
        disk (an upgrade, a rollback). Returns the main it had. The running
        incarnation, if any, runs on: stop or crash it, then restart it."""
        if not callable(main):
            raise UsageError(f"set_main() needs an async callable main, got {main!r:.60}")
        node = self._nodes.get(name)
        previous, node.main = node.main, main
        self._driver.emit("main", name, getattr(main, "__qualname__", type(main).__qualname__))
        return previous

    def crash_at_operation(
        self, name: str, operation: str, *, after: bool = True, count: int = 1
    ) -> bool:
        """Crash node `name` just after (or before) its `count`-th `operation` from now.

        `operation` is one of "fsync", "write", "rename" (its disk's), "send",
        "receive", "connect" (its network's). Before: the operation takes no
        effect (a disk one raises `OSError(EIO)`); after: it took full effect
        and the node runs nothing past it. One armed crash per node; it goes
        when the node crashes (by it or otherwise) or `disarm_operation(name)`.
        False if the node is not running or already has one armed.
        """
        if operation not in OPERATIONS:
            raise UsageError(
                f"Simulation.crash_at_operation(operation=...) must be one of "
                f"{', '.join(OPERATIONS)}, got {operation!r:.60}"
            )
        if not (isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= 10**9):
            raise UsageError(
                f"Simulation.crash_at_operation(count=...) must be an int in [1, 1e9], "
                f"got {count!r:.60}"
            )
        check_bool("Simulation.crash_at_operation", "after", after)
        node = self._nodes.get(name)
        if not node.up or node.ref is None or name in self._armed:
            return False
        phase = AFTER if after else BEFORE
        watch = OperationCrash(operation, phase, count, functools.partial(self._op_crash, name))
        self._armed[name] = watch
        if operation in DISK_OPS:
            node.disk.observer = watch
        else:
            node.ref.observer = watch
        self._driver.emit("arm", name, operation, phase, count)
        return True

    def disarm_operation(self, name: str) -> bool:
        """Take back node `name`'s armed operation crash; True if it had fired."""
        return self._disarm(self._nodes.get(name))

    def operation_fired(self, name: str) -> bool:
        """Whether node `name`'s armed operation crash has fired (False if none is armed)."""
        watch = self._armed.get(name)
        return watch is not None and watch.fired

    def _disarm(self, node: Node) -> bool:
        watch = self._armed.pop(node.name, None)
        if watch is None:
            return False
        if node.disk is not None and node.disk.observer is watch:
            node.disk.observer = None
        if node.ref is not None and node.ref.observer is watch:
            node.ref.observer = None
        return watch.fired

    def _op_crash(self, name: str) -> None:
        """An armed operation crash fires: the node dies inside its own code."""
        watch = self._armed[name]
        self._driver.emit("operation crash", name, watch.op, watch.phase, watch.count)
        self.crash(name)
        self._armed[name] = watch  # kept (fired) until its owner disarms it

    def pause(self, name: str, seconds: float) -> bool:
        """Stop node `name`'s code for `seconds` while the others run (a GC pause, a
        stopped VM); False if it is not running, already paused, or the world has
        no lanes (`interleave=False`).

        Its callbacks wait, in order, and run when it resumes: timers that came
        due meanwhile fire late, in deadline order. Its kernel goes on: data
        still arrives at its sockets and waits to be read; its disk keeps what
        it was given. A crash ends the pause, and so does `resume(name)`.
        """
        number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
        if not (number and 0 < seconds <= MAX_SECONDS):
            raise UsageError(
                f"Simulation.pause(seconds=...) must be a number of seconds in "
                f"(0, {MAX_SECONDS:.0e}], got {seconds!r:.60}"
            )
        node = self._nodes.get(name)
        driver = self._driver
        if not node.up or node.ref is None or not driver.lanes_enabled:
            return False
        if driver.is_paused(node.ref):
            return False
        ref = node.ref
        driver.pause_lane(ref)
        driver.emit("pause", name, to_ns(seconds))
        driver.call_later(seconds, self._resume, name, ref, context=self._world)
        return True

    def resume(self, name: str) -> bool:
        """End node `name`'s pause now; False if it was not paused."""
        node = self._nodes.get(name)
        return node.ref is not None and self._resume(name, node.ref)

    def _resume(self, name: str, ref: Any) -> bool:
        if not self._driver.is_paused(ref):
            return False
        self._driver.resume_lane(ref)
        self._driver.emit("resume", name)
        return True

    def bounce(self, name: str) -> None:
        """Crash and immediately restart a node."""
        self.crash(name)
        self.restart(name)

    def partition(self, a: str, b: str, *, one_way: bool = False) -> None:
        """Cut the wire: traffic a->b (and b->a unless one_way) is dropped."""
        self._network.partition(a, b, one_way=one_way)

    def repair(self, a: str, b: str, *, one_way: bool = False) -> None:
        self._network.repair(a, b, one_way=one_way)

    def hold(self, a: str, b: str, *, one_way: bool = False) -> None:
        """Block the pipe: traffic a->b (and b->a) is kept, delivered on release."""
        self._network.hold(a, b, one_way=one_way)

    def release(self, a: str, b: str, *, one_way: bool = False) -> None:
        self._network.release(a, b, one_way=one_way)

    def isolate(self, name: str, *, among: list[str] | None = None, add: bool = False) -> None:
        """Partition one node from every other host (or every other node of `among`).

        Clients keep reaching every host unless `among` names them. A pattern:
        it replaces the cuts of the last `isolate`/`random_halves` unless `add`;
        links cut or held by name are left as they are.
        """
        self._network.isolate(name, among=self._pattern_nodes(among), add=add)

    def heal(self) -> None:
        """Repair every partition and release every hold."""
        self._network.heal()

    def stop_stalls(self) -> None:
        """End the network's stall episodes (`NetworkConfig.stall_per_second`) from
        now on: one in progress ends now. A scenario's liveness phase calls it
        with the other faults' end; `heal()` leaves them, as timing, not faults."""
        self._network.stop_stalls()

    def random_halves(
        self, *, among: list[str] | None = None, add: bool = False
    ) -> tuple[list[str], list[str]]:
        """Partition the hosts (or `among`) into two halves drawn from the entropy.

        Clients keep reaching both halves unless `among` names them. A pattern,
        like `isolate`.
        """
        return self._network.random_halves(among=self._pattern_nodes(among), add=add)

    def cuts(self) -> list[tuple[str, str]]:
        """The links dropping traffic now, as (from, to) pairs, in node order."""
        return self._network.cuts()

    def links(self) -> list[LinkState]:
        """Every link made so far, as `LinkState(src, dst, state, waiting)`, in node order.

        A link exists once it carried traffic or was cut or held; `state` is
        "open", "dropped" (partitioned) or "held"; `waiting` counts the
        traffic queued at it (stalled stream pipes, held datagrams), which a
        repair or release delivers. Listing creates no link and draws nothing.
        """
        return self._network.links()

    def traffic(self, src: str, dst: str) -> LinkTraffic:
        """What faults did to the traffic of link src -> dst so far: datagrams a
        partition dropped, a hold held or the network lost or duplicated, streams
        stalled and connects blocked at it (`LinkTraffic`). Counting changes
        nothing in the run; asking creates no link and draws nothing."""
        return self._network.traffic(src, dst)

    def jump_clock(self, name: str, seconds: float) -> bool:
        """Move node `name`'s wall clock by `seconds` (either way); False if it is not running.

        Only the wall clock (`time.time()`, `datetime.now()`) jumps, as an
        NTP step does; the monotonic clock never does. The jump is kept across
        restarts (it is the machine's clock) and truncated to the nanosecond.
        """
        if not (
            isinstance(seconds, int | float)
            and not isinstance(seconds, bool)
            and abs(seconds) <= MAX_SECONDS  # NaN fails this too
        ):
            raise UsageError(
                f"Simulation.jump_clock(seconds=...) must be a number of seconds in "
                f"[-{MAX_SECONDS:.0e}, {MAX_SECONDS:.0e}], got {seconds!r:.60}"
            )
        node = self._nodes.get(name)
        if not node.up or node.ref is None:
            return False
        jump(node.ref, int(seconds * 1e9))
        return True

    def wall_clock_reads(self, name: str) -> int:
        """How many times node `name` has read its wall clock (`time.time()`,
        `datetime.now()`), over all its incarnations: 0 before it starts."""
        ref = self._nodes.get(name).ref
        return ref.wall_reads if ref is not None else 0

    def skew_clock(self, name: str, drift: float, step: float = 0.0) -> bool:
        """Give node `name`'s wall clock the rate error `drift` from now on (2e-4 is
        200 ppm fast), stepped by `step` seconds; False if it is not running.

        The clock reads on from where it was when `step` is 0, so a drift
        alone never makes it go backwards; the monotonic clock is the world's
        and never drifts. Kept across restarts, like `jump_clock`.
        """
        for option, value, bound in (("drift", drift, 0.5), ("step", step, MAX_SECONDS)):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not (number and abs(value) < bound):
                raise UsageError(
                    f"Simulation.skew_clock({option}=...) must be a number in "
                    f"(-{bound:g}, {bound:g}), got {value!r:.60}"
                )
        node = self._nodes.get(name)
        if not node.up or node.ref is None:
            return False
        skew(node.ref, self._driver.now_ns, int(step * 1e9), float(drift))
        return True

    def degrade_disk(
        self,
        name: str,
        error_probability: float | None = None,
        *,
        fsync_error: float | None = None,
        corrupt_read: float | None = None,
        misdirect_write: float | None = None,
    ) -> bool:
        """Make node `name`'s disk misbehave more until `restore_disk(name)`;
        False if it already is.

        `error_probability`: reads, writes and fsyncs fail (EIO) with at least
        this probability. The keywords raise one kind each: `fsync_error`
        (fsyncs fail and lose the file's unsynced writes), `corrupt_read` (a
        read returns one flipped bit), `misdirect_write` (a write lands at
        another sector of the file); see `DiskConfig` for what each does. On
        top of its `DiskConfig`: a setting already higher is kept. The node
        need not be running (its disk outlives its crashes).
        """
        given = {
            "error_probability": error_probability,
            "fsync_error": fsync_error,
            "corrupt_read": corrupt_read,
            "misdirect_write": misdirect_write,
        }
        odds: dict[str, float] = {}
        for option, value in given.items():
            if value is None:
                continue
            if not (
                isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1
            ):
                raise UsageError(
                    f"Simulation.degrade_disk({option}=...) must be a probability "
                    f"in (0, 1], got {value!r:.60}"
                )
            kinds = ERROR_KINDS if option == "error_probability" else (option,)
            odds.update(dict.fromkeys(kinds, float(value)))
        if not odds:
            raise UsageError(
                "Simulation.degrade_disk() needs error_probability or one of fsync_error, "
                "corrupt_read, misdirect_write"
            )
        node = self._nodes.get(name)
        return self._disk_faults.degrade(name, node.disk, odds)

    def restore_disk(self, name: str) -> int:
        """Give node `name`'s disk back its own `DiskConfig`; return how many
        faults of the kinds `degrade_disk` raised it injected meanwhile (0 if
        it was not degraded)."""
        node = self._nodes.get(name)
        return self._disk_faults.restore(name, node.disk)

    def disk_faults(self, name: str) -> dict[str, int]:
        """The faults node `name`'s disk injected so far, by kind (`seedbed.fs.FAULT_KINDS`:
        read and write errors, corrupted reads, misdirected and torn writes...)."""
        return dict(self._nodes.get(name).disk.fault_counts)

    def _pattern_nodes(self, among: list[str] | None) -> list[str]:
        if among is not None:
            return among
        return [node.name for node in self._nodes.all() if node.kind == HOST]

    @property
    def network(self) -> SimNetwork:
        return self._network

    # -- running ------------------------------------------------------------

    @property
    def loop(self) -> SeedbedLoop:
        return self._loop

    def advance(self, seconds: float) -> None:
        """Run the world for `seconds` of virtual time, then hand control back."""
        self._begin()
        target = self._loop.time() + seconds
        self._drive(self._sleep_until(target))

    def run(self, max_time: float | None = None) -> SimulationResult:
        """Run until every client returns (or, with no clients, for `max_time`)."""
        clients = [node for node in self._nodes.all() if node.kind == CLIENT]
        if not clients and max_time is None:
            raise UsageError("a simulation without clients needs max_time to know when to stop")
        if max_time is not None and clients:  # clients still running then: a failure
            self._driver.limit_time(max_time)
        return self.run_driven(lambda: self._until_clients_return(clients, max_time))

    def run_driven(self, driver: Callable[[], Awaitable[dict[str, Any]]]) -> SimulationResult:
        """Run until `driver()`, awaited in the world's own context, returns the values.

        A node's failure ends the run first. A `Scenario` drives its phases so.
        """
        if asyncio.events._get_running_loop() is not None:
            raise UsageError(
                "Simulation.run() was called inside a running event loop (from an async "
                "function): call it from a plain function taking the seed, or wrap the "
                "world's setup in a seedbed.Scenario"
            )
        self._begin()
        failure: BaseException | None = None
        values: dict[str, Any] = {}
        try:
            values = self._drive(self._driven(driver))
        except BaseException as exc:
            failure = exc
            divergence = self._driver.divergence
            if self._recorded is not None:  # a malformed or cut recording, not a divergence
                self._recorded.raise_if_defective()
                if divergence is not None:
                    raise_defect_after(self._recorded, divergence)
            recorded = self._recorded.header.get("python") if self._recorded else None
            if divergence is not None and note_python_version(divergence, recorded):
                # The standard library differs, not seedbed: its frames say nothing.
                raise divergence.with_traceback(None) from None
            if divergence is not None and divergence is not exc:
                raise divergence from exc
            raise
        finally:
            self._end()
            self._driver.seal(values, failure)  # the hash covers how the run ended
            if self._trace_path is not None:
                config = self._driver.config
                write_run_trace(
                    self._trace_path, self._loop, config, failure,
                    world=self._header(), value=values,
                )  # fmt: skip
        self._check_replay(values)
        loop = self._loop
        return SimulationResult(
            values, self.seed, loop.trace.hash, loop.steps, loop.clock.now / 1_000_000_000
        )

    def _header(self) -> dict[str, Any]:
        """The world's configs for the trace header (the loop's options are there already)."""
        return {
            "network": self._network.config.as_dict(),
            "disk": dataclasses.asdict(self._disk_config),
            "clock": dataclasses.asdict(self._clock),
            "interleave": self._driver.lanes_enabled,
            **self.trace_header,
        }

    def _read_recording(self, path: str | Path | None) -> RecordedTrace | None:
        if path is None:
            return None
        recorded = RecordedTrace(path)  # read as the run compares, one event at a time
        if recorded.seed != self.seed:
            raise UsageError(
                f"{path} was recorded with seed {recorded.seed}, not {self.seed}: "
                f"replay it with Simulation(seed={recorded.seed}, replay=...)"
            )
        return recorded

    def _check_replay(self, values: dict[str, Any]) -> None:
        """After a successful replayed run: it must have ended where the recording
        did, with the same client values."""
        if self._recorded is None:
            return
        trace = self._driver.trace
        trace.check_complete()
        recorded_failure = self._recorded.end.get("failure")  # raises a defect of the file
        if recorded_failure is not None:
            raise self._driver.stamp(
                Nondeterminism(
                    f"the replay ended differently from the recording after event "
                    f"{trace.count}\n  recorded: {recorded_failure}\n  actual:   completed"
                )
            )
        try:
            check_result(self._recorded.end, values)
            check_ending(self._recorded.end, self._loop.steps, self._loop.clock.now)
        except Nondeterminism as exc:
            raise self._driver.stamp(exc) from None

    def _begin(self) -> None:
        if self._finished:
            raise UsageError("this simulation has finished; make a new one")
        unknown = sorted(set(self._images) - set(self._nodes.names()))
        if unknown and not self._started:
            raise UsageError(
                f"the saved disks hold node {unknown[0]!r}, which this world does not have "
                f"(nodes: {', '.join(self._nodes.names()) or 'none'}); save them from the "
                "same world, or add the node"
            )
        if not self._started:
            self._started = True
            self._stream_trace()
            for node in self._nodes.all():
                self._start(node)

    def _stream_trace(self) -> None:
        """With `trace=PATH`, write the trace as the run goes (as `seedbed.run` does): a
        run killed midway leaves a file that replay calls incomplete, not divergent."""
        trace = self._driver.trace
        if self._trace_path is None or not isinstance(trace.events, list):
            return
        header = {**trace_header(self.seed, self._driver.config), **self._header()}
        writer = TraceWriter(self._trace_path, header)
        for event in trace.events:  # anything recorded while the world was set up
            writer.append(event)
        trace.events = writer  # type: ignore[assignment]
        trace.notes = writer.note  # annotations for `seedbed view`, outside the hash

    def _drive(self, coro: Any) -> Any:
        task = self._loop.create_task(coro, context=self._world.copy(), name="simulation")
        try:
            return self._loop.run_until_complete(task)
        except BaseException as exc:
            self._annotate(exc)
            if task.done() and not task.cancelled():
                task.exception()
            raise

    def _annotate(self, exc: BaseException) -> None:
        attach_context(exc, self.run_context())

    async def _driven(self, driver: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """The run's own task: the driver's coroutine is made only once this runs.

        A node can fail before the task's first step; a coroutine made up front
        would then be dropped unawaited (a RuntimeWarning at garbage collection).
        """
        values: dict[str, Any] = await self._first_of(driver())
        return values

    async def _sleep_until(self, target: float) -> None:
        await self._first_of(self._driver.sleep(max(0.0, target - self._loop.time())))

    async def _until_clients_return(
        self, clients: list[Node], max_time: float | None
    ) -> dict[str, Any]:
        if not clients:
            assert max_time is not None
            await self._first_of(self._driver.sleep(max(0.0, max_time - self._loop.time())))
            return {}
        finished = await self._first_of(asyncio.gather(*(node.result for node in clients)))
        return dict(zip((node.name for node in clients), finished, strict=True))

    async def _first_of(self, awaitable: Any) -> Any:
        """Await `awaitable`, unless a node fails first: then raise its error."""
        work = asyncio.ensure_future(awaitable)
        await _ordering.stdlib_wait([work, self._failed], return_when=asyncio.FIRST_COMPLETED)
        if self._failed.done():
            self._overtaken.append(work)  # left pending; the end of the run settles it
            self._failed.result()
        return work.result()

    def _start(self, node: Node) -> None:
        first = node.ref is None
        ref = self._nodes.new_incarnation(node)
        if first:
            draw_clock(ref, self._clock, self._driver.stream("clocks"))
        assert node.context is not None
        node.task = task = self._loop.create_task(
            _run_main(node.main, node.isolate),
            context=node.context,
            name=f"{node.name}#{node.incarnation}",
        )
        task.add_done_callback(functools.partial(self._node_finished, node), context=self._world)
        self._network.node_started(node.name)
        self._driver.emit("start", node.name, node.incarnation)

    def _node_finished(self, node: Node, task: asyncio.Future[Any]) -> None:
        """An incarnation's main ended (a buried one only when it crashed inside its
        own code, at an operation: then nothing it returned or raised counts)."""
        if node.task is not task or not node.up:
            return
        if task.cancelled():
            self._fail(UsageError(f"node {node.name!r}: its main task was cancelled"))
        elif task.exception() is not None:
            if not self._failed.done():
                self._failed_node = node.name
            self._fail(task.exception())
        elif node.kind == CLIENT and not node.result.done():
            node.result.set_result(task.result())

    def _node_finished_outside_a_node(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._fail(task.exception())

    def _fail(self, error: BaseException | None) -> None:
        if error is not None and not self._failed.done():
            self._failed.set_exception(error)

    def _end(self) -> None:
        """Stop every node quietly and close what they left, then the loop."""
        self._finished = True
        for node in self._nodes.all():
            if node.up:
                self._nodes.bury(self._driver, node)
        self._nodes.close_graveyard()
        abandon_pending(self._loop)  # the world's own leftovers: supervisors, actions
        if self._failed.done() and not self._failed.cancelled():
            failure = self._failed.exception()  # reported through the run, not at GC time
            if failure is not None:
                self._loop.note_failure(failure)
            for work in self._overtaken:  # a nested wait raised the same failure: not news
                if work.done() and not work.cancelled() and work._exception is failure:
                    work.exception()
        self._overtaken.clear()
        self._loop.close()
        request = _disks.save_request()
        if request is not None:
            self.save_disks(request.folder, state=request.state)

    def save_disks(self, folder: str | Path, *, state: str = "synced") -> None:
        """Write every node's disk to `folder` (see `seedbed.world._disks`): its
        durable state ("synced"), or what a crash now leaves ("crashed", once the
        run has ended: the disks are crashed for it). `Simulation(disks=folder)`
        starts another world on them."""
        if _disks.check_state(state) == "crashed" and not self._finished:
            raise UsageError(
                "Simulation.save_disks(state='crashed') crashes the disks: call it once "
                "the run has ended (or save state='synced' now)"
            )
        disks = [(node.name, node.disk) for node in self._nodes.all() if node.disk is not None]
        _disks.save(folder, disks, state=state, seed=self.seed)

    # -- components ---------------------------------------------------------

    def _make_network(self, config: NetworkConfig | None) -> SimNetwork:
        """Every world has a network (no faults beyond latency unless configured)."""
        stream = self._driver.stream("net")
        network = SimNetwork(self._loop, stream, config or _DEFAULT_NETWORK, self._nodes)
        self._loop.install_network(network)
        return network

    def _make_disk(self, name: str) -> SimDisk:
        """Every node has a disk (faults off unless `disk=DiskConfig(...)` says otherwise)."""
        stream = self._driver.stream(f"disk {name}")
        return SimDisk(stream, self._disk_config, name=name, coordinator=self._coordinator)

    @property
    def nodes(self) -> NodeTable:
        return self._nodes

    def run_context(self) -> RunContext:
        """Where the run is (seed, step, time, replay), naming the node whose main
        raised the run's failure if one did."""
        context = self._loop.run_context()
        if context.node is None and self._failed_node is not None:
            return dataclasses.replace(context, node=self._failed_node)
        return context


async def _run_main(main: Callable[[], Any], isolate: tuple[str, ...]) -> Any:
    """Call a node's main inside its own task (and context), then await it; with
    `isolate`, on its own fresh copies of those modules, imported here, in the node.

    The only frame between the task and the node's code: every wakeup of a
    node's main task resumes each frame of its await chain."""
    if isolate:
        main = isolated_main(main, isolate)
    awaitable = main()
    if not inspect.isawaitable(awaitable):
        raise UsageError(
            f"a node's main must be an async function; it returned {type(awaitable).__name__}"
        )
    return await awaitable


async def _awaiting(awaitable: Any) -> Any:
    """Await what an action returned (`_run_action` made sure it is awaitable)."""
    return await awaitable


_COMPONENTS = {"clock": ClockConfig, "network": NetworkConfig, "disk": DiskConfig}
# The defaults, built and validated once, not once per seed (about 10% of a tiny
# Scenario's set-up): frozen, and nothing changes a config in place.
_DEFAULT_NETWORK = NetworkConfig()
_DEFAULT_DISK = DiskConfig()
_DEFAULT_CLOCK = ClockConfig()


def _loop_config(options: dict[str, Any]) -> LoopConfig:
    """The `LoopConfig` of these options, validated once per distinct set, not per seed.

    A scenario builds a world per seed from the same options; a `LoopConfig`
    is frozen, so one object serves them all. Keyed by each value's type as
    well (`True == 1`, yet `strict=1` must still be refused); options that
    cannot be a key (a list, by mistake) are validated each time.
    """
    key = tuple((name, type(value), value) for name, value in options.items())
    try:
        hash(key)
    except TypeError:
        return _new_loop_config(options)
    return _cached_loop_config(key)


def _new_loop_config(options: dict[str, Any]) -> LoopConfig:
    try:
        return LoopConfig(**options)
    except TypeError as exc:
        raise UsageError(f"unknown Simulation option: {exc}") from None


@functools.lru_cache(maxsize=64)
def _cached_loop_config(key: tuple[tuple[str, type, Any], ...]) -> LoopConfig:
    return _new_loop_config({name: value for name, _, value in key})


def _check_components(**given: Any) -> None:
    """World options of the wrong type fail here, naming the type expected."""
    check_bool("Simulation", "interleave", given.pop("interleave"))
    for name, value in given.items():
        expected = _COMPONENTS[name]
        if value is None or isinstance(value, expected):
            continue
        hint = f"; write {expected.__name__}(**{{...}})" if isinstance(value, dict) else ""
        raise UsageError(
            f"Simulation({name}=...) takes a seedbed.{expected.__name__} or None, "
            f"got {type(value).__name__} {value!r:.60}{hint}"
        )
