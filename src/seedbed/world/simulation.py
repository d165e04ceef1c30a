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
from seedbed._core.trace import Event
from seedbed._core.tracefile import RecordedTrace, TraceWriter
from seedbed._core.validate import check_bool
from seedbed._identity import NODE
from seedbed.aio._state import LoopConfig
from seedbed.aio.loop import SeedbedLoop
from seedbed.aio.runner import (
    abandon_pending,
    check_result,
    check_seed,
    trace_header,
    write_run_trace,
)
from seedbed.errors import Nondeterminism, RunContext, SimulationFailure, UsageError
from seedbed.fs import DiskConfig, FaultCoordinator, SimDisk
from seedbed.net import NetworkConfig, SimNetwork
from seedbed.world._clocks import ClockConfig, draw_clock, wall_ns
from seedbed.world._nodes import CLIENT, HOST, Node, NodeTable
from seedbed.world._params import Params


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
        **loop_options: Any,
    ) -> None:
        self.seed = check_seed(seed)
        _check_components(clock=clock, network=network, disk=disk, interleave=interleave)
        try:
            config = LoopConfig(**loop_options)
        except TypeError as exc:
            raise UsageError(f"unknown Simulation option: {exc}") from None
        self._trace_path = trace
        self._recorded = self._read_recording(replay)
        events = cast(Sequence[Event], self._recorded.events) if self._recorded else None
        self._loop = SeedbedLoop(self.seed, config, Trace(keep=trace is not None, expected=events))
        self._loop._st.replay = f"seedbed.Simulation(seed={self.seed}) with the same setup"
        if interleave:
            self._loop.enable_lanes(NODE)
        self._loop.set_wall_clock(wall_ns)
        self._clock = clock or ClockConfig()
        self._world = contextvars.Context()  # the world's own code runs in no node
        self._nodes = NodeTable()
        self._failed: asyncio.Future[None] = self._loop.create_future()
        self._overtaken: list[asyncio.Future[Any]] = []  # work a failure won the race against
        self._started = False
        self._finished = False
        self._disk_config = disk or DiskConfig()
        self._coordinator = FaultCoordinator()
        self._network = self._make_network(network)
        self.params = Params()  # world parameters; a swarm scenario draws them per seed
        self.trace_header: dict[str, Any] = {}  # more for the trace file's header (a scenario's)

    # -- building the world -------------------------------------------------

    def host(self, name: str, main: Callable[[], Any]) -> None:
        """Add a host: `main()` runs at the start and again after each restart."""
        self._add(name, HOST, main)

    def client(self, name: str, main: Callable[[], Any]) -> None:
        """Add a client: `main()` runs once; the run ends when every client returned."""
        self._add(name, CLIENT, main)

    def _add(self, name: str, kind: str, main: Callable[[], Any]) -> None:
        if self._finished:
            raise UsageError("this simulation has finished; make a new one")
        node = Node(name, kind, main, self._make_disk(name), self._loop.create_future())
        self._nodes.add(node)
        self._network.address_of(name)  # its name resolves from now on
        if self._started:
            self._start(node)

    def at(self, when: float, action: Callable[[], Any]) -> None:
        """Run `action()` (a function or an async function) at virtual time `when`."""
        if not callable(action):
            raise UsageError(f"at() needs a callable action, got {action!r}")
        self._loop.call_at(when, self._run_action, action, context=self._world)

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
        self._nodes.bury(self._loop, node)
        self._network.node_crashed(name)
        if node.disk is not None:
            node.disk.crash()
        self._loop._st.trace.emit("crash", name, node.incarnation)
        return True

    def restart(self, name: str) -> bool:
        """Start a crashed host or client again, with only what its disk kept."""
        node = self._nodes.get(name)
        if node.up or not self._started:
            return False
        self._start(node)
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
            st = self._loop._st
            st.time_limit = to_ns(max_time)
            st.wake_limit = min(st.wake_limit, st.time_limit)
            self._loop._st.config = _with_max_time(st.config, max_time)
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
            if self._recorded is not None:  # a malformed or cut recording, not a divergence
                self._recorded.raise_if_defective()
            divergence = self._loop._st.trace.divergence
            if divergence is not None and divergence is not exc:
                raise divergence from exc
            raise
        finally:
            self._end()
            if self._trace_path is not None:
                config = self._loop._st.config
                write_run_trace(
                    self._trace_path, self._loop, config, failure,
                    world=self._header(), value=values,
                )  # fmt: skip
        self._check_replay(values)
        st = self._loop._st
        return SimulationResult(
            values, self.seed, st.trace.hash, st.steps, st.clock.now / 1_000_000_000
        )

    def _header(self) -> dict[str, Any]:
        """The world's configs for the trace header (the loop's options are there already)."""
        return {
            "network": self._network.config.as_dict(),
            "disk": dataclasses.asdict(self._disk_config),
            "clock": dataclasses.asdict(self._clock),
            "interleave": self._loop._st.lane_var is not None,
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
        trace = self._loop._st.trace
        trace.check_complete()
        recorded_failure = self._recorded.end.get("failure")  # raises a defect of the file
        if recorded_failure is not None:
            raise self._loop._fail(
                Nondeterminism(
                    f"the replay ended differently from the recording after event "
                    f"{trace.count}\n  recorded: {recorded_failure}\n  actual:   completed"
                )
            )
        try:
            check_result(self._recorded.end, values)
        except Nondeterminism as exc:
            raise self._loop._fail(exc) from None

    def _begin(self) -> None:
        if self._finished:
            raise UsageError("this simulation has finished; make a new one")
        if not self._started:
            self._started = True
            self._stream_trace()
            for node in self._nodes.all():
                self._start(node)

    def _stream_trace(self) -> None:
        """With `trace=PATH`, write the trace as the run goes (as `seedbed.run` does): a
        run killed midway leaves a file that replay calls incomplete, not divergent."""
        trace = self._loop._st.trace
        if self._trace_path is None or not isinstance(trace.events, list):
            return
        header = {**trace_header(self.seed, self._loop._st.config), **self._header()}
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
        context = self._loop.run_context()
        if isinstance(exc, SimulationFailure):
            if exc.context is None:
                exc.context = context
        elif not any(n.startswith("  seed=") for n in getattr(exc, "__notes__", [])):
            exc.add_note(context.describe())

    async def _driven(self, driver: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """The run's own task: the driver's coroutine is made only once this runs.

        A node can fail before the task's first step; a coroutine made up front
        would then be dropped unawaited (a RuntimeWarning at garbage collection).
        """
        values: dict[str, Any] = await self._first_of(driver())
        return values

    async def _sleep_until(self, target: float) -> None:
        await self._first_of(asyncio.sleep(max(0.0, target - self._loop.time())))

    async def _until_clients_return(
        self, clients: list[Node], max_time: float | None
    ) -> dict[str, Any]:
        if not clients:
            assert max_time is not None
            await self._first_of(asyncio.sleep(max(0.0, max_time - self._loop.time())))
            return {}
        finished = await self._first_of(asyncio.gather(*(node.result for node in clients)))
        return dict(zip((node.name for node in clients), finished, strict=True))

    async def _first_of(self, awaitable: Any) -> Any:
        """Await `awaitable`, unless a node fails first: then raise its error."""
        work = asyncio.ensure_future(awaitable)
        await asyncio.wait({work, self._failed}, return_when=asyncio.FIRST_COMPLETED)
        if self._failed.done():
            self._overtaken.append(work)  # left pending; the end of the run settles it
            self._failed.result()
        return work.result()

    def _start(self, node: Node) -> None:
        first = node.ref is None
        ref = self._nodes.new_incarnation(node)
        if first:
            draw_clock(ref, self._clock, self._loop._st.entropy.stream("clocks"))
        assert node.context is not None
        node.task = task = self._loop.create_task(
            _run_main(node.main), context=node.context, name=f"{node.name}#{node.incarnation}"
        )
        task.add_done_callback(functools.partial(self._node_finished, node), context=self._world)
        self._network.node_started(node.name)
        self._loop._st.trace.emit("start", node.name, node.incarnation)

    def _node_finished(self, node: Node, task: asyncio.Future[Any]) -> None:
        """An incarnation's main ended (a buried one never does)."""
        if task.cancelled():
            self._fail(UsageError(f"node {node.name!r}: its main task was cancelled"))
        elif task.exception() is not None:
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
                self._nodes.bury(self._loop, node)
        self._nodes.close_graveyard()
        abandon_pending(self._loop)  # the world's own leftovers: supervisors, actions
        if self._failed.done() and not self._failed.cancelled():
            failure = self._failed.exception()  # reported through the run, not at GC time
            for work in self._overtaken:  # a nested wait raised the same failure: not news
                if work.done() and not work.cancelled() and work._exception is failure:
                    work.exception()
        self._overtaken.clear()
        self._loop.close()

    # -- components ---------------------------------------------------------

    def _make_network(self, config: NetworkConfig | None) -> SimNetwork:
        """Every world has a network (no faults beyond latency unless configured)."""
        stream = self._loop._st.entropy.stream("net")
        network = SimNetwork(self._loop, stream, config or NetworkConfig(), self._nodes)
        self._loop.install_network(network)
        return network

    def _make_disk(self, name: str) -> SimDisk:
        """Every node has a disk (faults off unless `disk=DiskConfig(...)` says otherwise)."""
        stream = self._loop._st.entropy.stream(f"disk {name}")
        return SimDisk(stream, self._disk_config, name=name, coordinator=self._coordinator)

    @property
    def nodes(self) -> NodeTable:
        return self._nodes

    def run_context(self) -> RunContext:
        return self._loop.run_context()


async def _run_main(main: Callable[[], Any]) -> Any:
    """Call a node's main inside its own task (and context), then await it."""
    return await _awaiting(main())


async def _awaiting(awaitable: Any) -> Any:
    """Await what a node's main returned; refuse a main that is not async."""
    if not inspect.isawaitable(awaitable):
        raise UsageError(
            f"a node's main must be an async function; it returned {type(awaitable).__name__}"
        )
    return await awaitable


_COMPONENTS = {"clock": ClockConfig, "network": NetworkConfig, "disk": DiskConfig}


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


def _with_max_time(config: LoopConfig, max_time: float) -> LoopConfig:
    """The config as the budget error should quote it."""
    options = config.as_dict()
    options["max_time"] = max_time
    return LoopConfig(**options)
