"""`Scenario`: a world, the pressure on it, its budget and its oracles, run by seed.

One run of a scenario under a seed:

1. a fresh `Simulation` is made from the world options (with a fault
   profile's datagram odds added to the network's); `setup(sim)` builds the
   world on it (hosts, clients, `sim.params`);
2. fault phase: the workload runs while the nemesis injects the profile's
   faults, for `duration` virtual seconds or until every client has
   returned, whichever is first;
3. liveness phase (only with `liveness` predicates): no new faults, every
   fault ended (partitions repaired, holds released, crashed nodes
   restarted), then every predicate must hold within `liveness_timeout`
   virtual seconds, else `LivenessFailure` naming those still false;
4. end (only with `checks`): each check is called once, inside the run, on
   what the workload left (a `seedbed.check.HistoryOracle` checks the
   history it recorded); one that is false or raises fails the run with
   `InvariantViolation`.

With `upgrades={"node": new_main, ...}` (or a function of the world that
returns such a dict) the fault phase also runs a rolling upgrade of those
nodes, new code on their old disks, and the liveness phase (or the end of
the fault phase, without one) finishes it (`seedbed.faults._upgrades`).

Invariants are checked continuously (see `_oracles`). A run is bounded by a
budget: virtual time (the phases plus a margin) and steps (`max_steps`), so a
livelocked world ends in `BudgetExceeded`, never a hang.

Every failure of a scenario run is a `SimulationFailure` carrying a
`FailureReport` (`error.report`); an exception from user code that nothing
caught becomes `InvariantViolation` (an `AssertionError`) or `UncaughtError`
(anything else), with the original as its cause.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core import Entropy, Trace, choices
from seedbed._core.naming import scenario_replay
from seedbed._core.validate import check_positive_int, check_seconds
from seedbed.aio import _ordering
from seedbed.aio._state import LoopConfig
from seedbed.errors import (
    InvariantViolation,
    LivenessFailure,
    SimulationFailure,
    UncaughtError,
    UsageError,
)
from seedbed.faults._hooks import assertions_of, hooks_of
from seedbed.faults._nemesis import Nemesis, link_stall_counts
from seedbed.faults._profile import FaultProfile
from seedbed.faults._swarm import Swarm, parse_faults
from seedbed.faults._upgrades import RollingUpgrade
from seedbed.net import NetworkConfig
from seedbed.scenario._healed_core import check_core, check_hosts, heal_core
from seedbed.scenario._oracles import Oracles, location_of, name_of
from seedbed.scenario._report import ALL_EVENTS, FailureReport, user_location
from seedbed.scenario._story import (
    EventTap,
    describe_tail,
    hushed,
    record_entries,
    subjects_of,
)
from seedbed.world import Simulation
from seedbed.world._params import Params

DEFAULT_MAX_STEPS = 20_000_000  # ~a minute of wall time for a busy world
_WORLD_OPTIONS = frozenset({"clock", "network", "disk", "disks", "interleave"}) | frozenset(
    LoopConfig().as_dict()
)


@dataclass(frozen=True)
class ScenarioResult:
    """One passing run of a scenario: what the clients returned, and what was tried."""

    seed: int
    scenario: str
    values: dict[str, Any]
    trace_hash: str
    steps: int
    virtual_time: float
    profile: dict[str, Any] | None  # the fault profile in force (drawn, under swarm)
    faults: dict[str, dict[str, int]]  # per fault class: injected, effective
    assertions: dict[str, dict[str, Any]]  # the assertion catalog
    params: dict[str, Any] = dataclasses.field(default_factory=dict)


class Scenario:
    """A named test of a world: `setup(sim)` builds it; `run(seed)` runs it once.

    `liveness_core` changes how the liveness phase judges `liveness`: None
    heals the whole world first; "majority" (drawn per seed) or a list of
    host names heals that core and keeps the faults going on the other hosts
    meanwhile (`sim.liveness_core` names it to the predicates).
    """

    def __init__(
        self,
        name: str,
        setup: Callable[[Simulation], Any],
        faults: FaultProfile | Swarm | str | None = None,
        duration: float = 30.0,
        invariants: Sequence[Callable[[], Any]] = (),
        liveness: Sequence[Callable[[], Any]] = (),
        liveness_timeout: float = 30.0,
        *,
        invariant_interval: int = 1,
        checks: Sequence[Callable[[], Any]] = (),
        upgrades: Upgrades | None = None,
        liveness_core: str | Sequence[str] | None = None,
        **world_options: Any,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise UsageError(f"Scenario.name must be a non-empty string, got {name!r}")
        if not callable(setup):
            raise UsageError(
                f"Scenario.setup must be a function taking the Simulation, got {setup!r}"
            )
        if not (faults is None or faults == "swarm" or isinstance(faults, FaultProfile | Swarm)):
            raise UsageError(
                f'Scenario.faults must be None, a FaultProfile, "swarm" or seedbed.swarm(...), '
                f"got {faults!r}"
            )
        check_seconds("Scenario", "duration", duration, allow_zero=False)
        check_seconds("Scenario", "liveness_timeout", liveness_timeout, allow_zero=False)
        check_positive_int("Scenario", "invariant_interval", invariant_interval)
        for kind, predicates in (
            ("invariants", invariants),
            ("liveness", liveness),
            ("checks", checks),
        ):
            if isinstance(predicates, str) or not all(callable(p) for p in predicates):
                raise UsageError(
                    f"Scenario.{kind} must be zero-argument callables, got {predicates!r}"
                )
        check_core(liveness_core, liveness)
        unknown = sorted(set(world_options) - _WORLD_OPTIONS)
        if unknown:
            raise UsageError(
                f"unknown Scenario world option {unknown[0]!r}; world options are "
                f"{', '.join(sorted(_WORLD_OPTIONS))}"
            )
        self.name = name
        self.setup = setup
        self.faults = faults
        self.duration = float(duration)
        self.invariants = tuple(invariants)
        self.liveness = tuple(liveness)
        self.liveness_timeout = float(liveness_timeout)
        self.checks = tuple(checks)
        self.invariant_interval = invariant_interval
        self.world_options = world_options
        self.upgrades = _check_upgrades(upgrades)
        self.liveness_core = liveness_core  # None: heal all; else see `_healed_core`
        self._module = sys._getframe(1).f_globals.get("__name__")  # to name it in replays
        self.target: str | None = None  # set by whoever resolved it by name (the CLI)

    def __repr__(self) -> str:
        return f"<Scenario {self.name!r}>"

    @property
    def budget_time(self) -> float:
        """The virtual-time budget: the phases plus a margin (10%, at least 5 s)."""
        phases = self.duration + (self.liveness_timeout if self.liveness else 0.0)
        return phases + max(5.0, phases * 0.1)

    def run(self, seed: int, *, trace: str | Path | None = None) -> ScenarioResult:
        """Run once under `seed`. Raises the failure (with its report) if the run fails."""
        result, error = self.execute(seed, trace=trace)
        if error is not None:
            raise error
        assert result is not None
        return result

    def execute(
        self,
        seed: int,
        *,
        trace: str | Path | None = None,
        replay: str | None = None,
        overrides: dict[str, Any] | None = None,
        recording: str | Path | None = None,
        last_events: bool = True,
    ) -> tuple[ScenarioResult | None, SimulationFailure | None]:
        """Run once; return (result, None) or (None, failure with its report).

        `overrides` replace world options for this run (the CLI's budgets);
        `recording` checks the run against a recorded trace (`Nondeterminism`
        at the first difference). Without `last_events`, a failure's report
        has none (no second run to collect them: what a shrinker's many trial
        runs want). Usage errors (a broken setup call, bad options) still raise.
        """
        command = replay or scenario_replay(self, seed, overrides)
        world = dict(overrides or {})
        if recording is not None:
            world["replay"] = recording
        run = _Run(self, seed, trace, command, world)
        try:
            return run.go(), None
        except UsageError as exc:
            if not run.running:
                raise
            # Raised once the world ran (a checker handed a malformed history, a
            # seedbed call misused on one path): this seed's failure, not the target's.
            return None, run.failure(exc, last_events)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            return None, run.failure(exc, last_events)

    def replay_events(
        self, seed: int, overrides: dict[str, Any] | None = None, keep: int = ALL_EVENTS
    ) -> list[str]:
        """The last `keep` trace events of this seed's run, re-run to collect them."""
        return describe_tail(self.replay_tap(seed, overrides).tail, keep, draws=True)

    def replay_tap(self, seed: int, overrides: dict[str, Any] | None = None) -> EventTap:
        """This seed's run once more, its events tapped: the tail and the world
        events a report tells. A run keeps no events (that would slow every
        passing seed), so a failure runs its seed a second time to tell its story."""
        run = _Run(self, seed, None, "", overrides or {})
        tap = EventTap(nemesis=run.pressure is not None)
        run.tap(tap)
        with hushed():
            try:
                run.go()
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException:
                pass
        return tap


# Swarm's clock resolutions: the default's 1 ms, Linux's coarse monotonic
# clock (4 ms) and Windows' timer tick (15.6 ms).
CLOCK_TICKS = (0.001, 0.004, 0.0156)


def _swarm_loop(seed: int, options: dict[str, Any]) -> dict[str, Any]:
    """Under swarm, the loop's exploration per seed, drawn from its own stream
    so the fault profile of a seed is the same whatever is drawn here: task
    order stays on unless the user turned it off, and the clock resolution is
    one of `CLOCK_TICKS` no finer than the user's (or the default's), unless
    the user asked for an exact clock (0). Never less exploration than the
    defaults: a varied mix finds what one fixed mix hides (see `_profile`)."""
    stream = Entropy(seed, Trace()).stream("swarm loop")
    drawn: dict[str, Any] = {}
    base = options.get("clock_resolution", LoopConfig().clock_resolution)
    if base:
        ticks = [tick for tick in CLOCK_TICKS if tick > base]
        drawn["clock_resolution"] = stream.choice([base, *ticks], "swarm: clock resolution")
    return drawn


# Swarm's latency profiles, (min, mean, max) one-way seconds per hop.
LATENCY_PROFILES = {
    "lan": (0.00005, 0.0002, 0.001),
    "datacenter": (0.0005, 0.001, 0.005),  # NetworkConfig's default
    "wan": (0.01, 0.04, 0.2),
}


# Swarm's latency tails, (min, max) seconds of a spike: tens of milliseconds and
# up on a LAN (well past an application's timeout of tens of ms), more on a WAN.
LATENCY_TAILS = {
    "lan": (0.02, 0.25),
    "datacenter": (0.02, 0.25),
    "wan": (0.2, 1.0),
}


def tail_config(name: str, probability: float) -> NetworkConfig:
    """Profile `name` with the heavy-tailed latency model, spiking with `probability`."""
    low, mean, high = LATENCY_PROFILES[name]
    tail_min, tail_max = LATENCY_TAILS[name]
    return NetworkConfig(
        latency_min=low, latency_mean=mean, latency_max=high, latency_model="tail",
        latency_tail_probability=probability, latency_tail_min=tail_min,
        latency_tail_max=tail_max,
    )  # fmt: skip


def _swarm_network(seed: int) -> NetworkConfig:
    """One seed's network timing: a LAN, a data centre or a WAN, always with
    a heavy tail (`NetworkConfig.latency_model="tail"`, never less than the
    default's): 1-6% of hops spike to 20-250 ms (a WAN: 0.2-1 s), and each
    link has its own spread: a narrow latency distribution rarely reorders
    messages or outlasts a timeout. Its own stream: the fault profile of a
    seed is unchanged by it."""
    stream = Entropy(seed, Trace()).stream("swarm network")
    name = stream.choice(sorted(LATENCY_PROFILES), "swarm: latency profile")
    drawn = stream.uniform(0.01, 0.06, "swarm: latency tail probability")
    return tail_config(name, float(f"{drawn:.3g}"))


class _Run:
    """One seed of one scenario: the world, its nemesis and its oracles."""

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        trace: str | Path | None,
        replay: str,
        overrides: dict[str, Any],
        tap: EventTap | None = None,
    ) -> None:
        self.scenario = scenario
        self.seed = seed
        self.overrides = overrides
        self.running = False  # set once the world's phases start
        self.pressure = _pressure(scenario.faults, overrides.get("faults"))
        self.swarm = self.pressure if isinstance(self.pressure, Swarm) else None
        self.profile = self._profile(seed)
        self.sim = self._make_world(seed, trace)
        self.sim.loop.driver.replay = replay
        self.replay = replay
        self.nemesis: Nemesis | None = None
        self.upgrades: RollingUpgrade | None = None
        if tap is not None:
            self.tap(tap)
        self.oracles = Oracles(
            self.sim.loop, scenario.invariants, scenario.liveness, scenario.invariant_interval,
            scenario.checks,
        )  # fmt: skip

    def tap(self, tap: EventTap) -> None:
        """Keep the run's events in `tap` (a report's second run)."""
        trace_object = self.sim.loop.trace
        trace_object.events = tap  # type: ignore[assignment]
        trace_object.quiet = False

    def _profile(self, seed: int) -> FaultProfile | None:
        if self.swarm is not None:  # its own streams, independent of the run's draws
            return self.swarm.draw(Entropy(seed, Trace()))
        return self.pressure if isinstance(self.pressure, FaultProfile) else None

    def _make_world(self, seed: int, trace: str | Path | None) -> Simulation:
        options = {**self.scenario.world_options, **self.overrides}
        options.pop("faults", None)  # the run's pressure (`--faults`), not a world option
        swarm_loop: dict[str, Any] = {}
        if self.swarm is not None:
            swarm_loop = _swarm_loop(seed, options)
            if options.get("network") is None:  # the user's network is kept as given
                swarm_loop["network"] = _swarm_network(seed)
        options.update(swarm_loop)
        options.setdefault("max_time", self.scenario.budget_time)
        options.setdefault("max_steps", DEFAULT_MAX_STEPS)
        profile = self.profile
        if profile is not None and (
            profile.datagram_loss_probability or profile.datagram_duplicate_probability
        ):
            base = options.get("network") or NetworkConfig()
            options["network"] = dataclasses.replace(
                base,
                loss_probability=_either(base.loss_probability, profile.datagram_loss_probability),
                duplicate_probability=_either(
                    base.duplicate_probability, profile.datagram_duplicate_probability
                ),
            )
        if profile is not None and profile.link_stall_per_second:
            base = options.get("network") or NetworkConfig()
            options["network"] = dataclasses.replace(
                base, stall_per_second=base.stall_per_second + profile.link_stall_per_second
            )
        sim = Simulation(seed, trace=trace, **options)
        profile_data = profile.as_dict() if profile is not None else None
        sim.trace_header.update({"scenario": self.scenario.name, "profile": profile_data})
        if swarm_loop:
            sim.trace_header["swarm_loop"] = {
                key: value.as_dict() if isinstance(value, NetworkConfig) else value
                for key, value in swarm_loop.items()
            }
        # The profile as hashed since `traced` was added ("null": no profile).
        traced = json.dumps(profile.traced(), sort_keys=True) if profile is not None else "null"
        sim.loop.trace.emit("scenario", self.scenario.name, traced)
        if self.swarm is not None:
            sim.params = Params(sim.loop.entropy.stream("swarm params"))
        if profile is not None:
            hooks_of(sim.loop).configure(
                buggify=profile.buggify, failpoint_probability=profile.failpoint_probability
            )
        return sim

    def go(self) -> ScenarioResult:
        sim = self.sim
        self.scenario.setup(sim)
        check_hosts(sim, self.scenario.liveness_core)
        sim.trace_header["params"] = dict(sim.params.drawn)
        if self.scenario.invariants or self.scenario.liveness:  # else the hook does nothing
            sim.loop.driver.after_node_step = self.oracles
        if self.profile is not None:
            self.nemesis = Nemesis(sim, self.profile, sim.loop.entropy.stream("nemesis"))
        self.upgrades = self._rolling_upgrade()
        result = sim.run_driven(self._phases)
        return ScenarioResult(
            seed=self.seed,
            scenario=self.scenario.name,
            values=result.values,
            trace_hash=result.trace_hash,
            steps=result.steps,
            virtual_time=result.virtual_time,
            profile=self.profile.as_dict() if self.profile is not None else None,
            faults=self._faults(),
            assertions=self._assertions(),
            params=dict(sim.params.drawn),
        )

    def _rolling_upgrade(self) -> RollingUpgrade | None:
        upgrades = self.scenario.upgrades
        if upgrades is None:
            return None
        mains = upgrades(self.sim) if not isinstance(upgrades, dict) else upgrades
        _check_upgrade_mains(mains)
        missing = sorted(set(mains) - set(self.sim.nodes.names()))
        if missing:
            raise UsageError(
                f"Scenario.upgrades names node {missing[0]!r}, which setup did not add "
                f"(nodes: {', '.join(self.sim.nodes.names()) or 'none'})"
            )
        stream = self.sim.loop.entropy.stream("upgrades")
        return RollingUpgrade(self.sim, mains, stream, self.scenario.duration)

    async def _phases(self) -> dict[str, Any]:
        self.running = True
        sim, scenario = self.sim, self.scenario
        clients = [node for node in sim.nodes.all() if node.kind == "client"]
        self.oracles.check_invariants()  # the world as setup built it
        if self.nemesis is not None:
            self.nemesis.start()
        if self.upgrades is not None:
            self.upgrades.start()
        # A shrinker replaying choices may end the fault phase sooner (see `choices.setting`).
        duration = choices.setting("scenario", "fault phase seconds", scenario.duration)
        if clients:
            await _ordering.stdlib_wait([node.result for node in clients], timeout=duration)
        else:
            await sim.loop.driver.sleep(duration)
        choices.phase_ended(sim.loop.time())
        if scenario.liveness:
            await self._liveness_phase()
        elif self.upgrades is not None:
            self.upgrades.finish()
        self.oracles.run_checks()
        return {node.name: node.result.result() for node in clients if node.result.done()}

    async def _liveness_phase(self) -> None:
        sim = self.sim
        sim.loop.trace.emit("scenario", "liveness phase")
        if self.nemesis is not None:
            self.nemesis.stop()
        if self.upgrades is not None:
            self.upgrades.finish()  # the rolling upgrade ends all new, at the latest now
        # In-code faults stop too (FoundationDB's rule): a buggify site that
        # keeps pausing leaders would fail liveness by design, not by a bug.
        hooks_of(sim.loop).configure(buggify=False, failpoint_probability=0.0)
        sim.heal()
        sim.stop_stalls()  # the network's own stall episodes are faults too, for liveness
        for node in sim.nodes.all():
            if not node.up and not (node.kind == "client" and node.result.done()):
                sim.restart(node.name)
        after = "the faults stopped"
        if self.scenario.liveness_core is not None:  # the others keep failing
            after = heal_core(sim, self.scenario.liveness_core, self.nemesis)
        reached = self.oracles.liveness_reached()
        done, _ = await _ordering.stdlib_wait([reached], timeout=self.scenario.liveness_timeout)
        if self.scenario.liveness_core is not None and self.nemesis is not None:
            self.nemesis.stop()  # the run ends healed, as the classic phase leaves it
        if not done:
            still = self.oracles.still_false()
            error = LivenessFailure(
                f"liveness: {len(still)} propert{'y' if len(still) == 1 else 'ies'} still false "
                f"{self.scenario.liveness_timeout:g}s after {after}: {'; '.join(still)}"
            )
            first = next(p for p in self.scenario.liveness if name_of(p) in still[0])
            error.location = location_of(first)  # type: ignore[attr-defined]
            error.assertion = f"liveness {name_of(first)}"  # type: ignore[attr-defined]
            raise error

    def _budgets(self) -> dict[str, Any]:
        return {key: value for key, value in self.overrides.items() if key != "replay"}

    def _assertions(self) -> dict[str, dict[str, Any]]:
        """The run's assertion catalog: its `always`/`sometimes`/... calls and
        the scenario's invariants, liveness predicates and end-of-run checks."""
        return {**assertions_of(self.sim.loop), **self.oracles.catalog()}

    def _faults(self) -> dict[str, dict[str, int]]:
        counts = dict(self.nemesis.counts) if self.nemesis is not None else {}
        stalls = link_stall_counts(self.sim)
        if stalls["injected"] or (self.profile is not None and self.profile.link_stall_per_second):
            counts["link_stall"] = stalls  # the network's own, on by default
        if self.upgrades is not None:
            counts["upgrade"] = self.upgrades.counts
        return counts

    def _records(self) -> list[dict[str, Any]]:
        records = self.nemesis.records() if self.nemesis is not None else []
        if self.upgrades is not None:
            records += [record.as_dict() for record in self.upgrades.records]
        return sorted(records, key=lambda record: record["start"])

    def failure(self, exc: BaseException, last_events: bool = True) -> SimulationFailure:
        """The run's failure as a `SimulationFailure` with its report (its story
        and last events from a second run of the seed, unless `last_events` is
        off: the faults' records still tell theirs)."""
        error = _as_failure(exc)
        if error.context is None:
            error.context = self.sim.run_context()
        context = error.context
        names = tuple(node.name for node in self.sim.nodes.all())
        story = record_entries(self._records())
        tail: list[str] = []
        if last_events:
            tap = self.scenario.replay_tap(self.seed, self._budgets())
            story = sorted([*story, *tap.entries()], key=lambda entry: entry["t"])
            tail = describe_tail(tap.tail, ALL_EVENTS, draws=True)
        error.report = FailureReport(
            scenario=self.scenario.name,
            seed=self.seed,
            step=context.step,
            virtual_time=context.virtual_time_ns / 1e9,
            profile=self.profile.as_dict() if self.profile is not None else None,
            params=dict(self.sim.params.drawn),
            faults=self._faults(),
            assertions=self._assertions(),
            location=user_location(error),
            last_events=tail,
            replay=self.replay,
            names=names,
            node=context.node,
            story=story,
            subjects=subjects_of(error.message, context.node, names),
        )
        return error


Upgrades = dict[str, Callable[[], Any]] | Callable[[Simulation], dict[str, Callable[[], Any]]]


def _check_upgrades(upgrades: Any) -> Any:
    """`upgrades=`: None, a dict of node name -> new main, or a function of the world
    that returns one (for mains made per run)."""
    if upgrades is None or (callable(upgrades) and not isinstance(upgrades, dict)):
        return upgrades
    _check_upgrade_mains(upgrades)
    return dict(upgrades)


def _check_upgrade_mains(upgrades: Any) -> None:
    if not isinstance(upgrades, dict) or not all(
        isinstance(name, str) and callable(main) for name, main in upgrades.items()
    ):
        raise UsageError(
            "Scenario.upgrades takes {node name: new main} (or a function of the world "
            f"returning one), got {upgrades!r:.80}"
        )


def _pressure(faults: Any, spec: str | None) -> FaultProfile | Swarm | None:
    """The faults a run is under: `--faults` (a spec) if given, else the scenario's."""
    if spec is not None:
        return parse_faults(spec)
    if faults == "swarm":
        return Swarm()
    return faults if isinstance(faults, FaultProfile | Swarm) else None


def _as_failure(exc: BaseException) -> SimulationFailure:
    if isinstance(exc, SimulationFailure):
        return exc
    notes = [n for n in getattr(exc, "__notes__", []) if not n.startswith("  seed=")]
    if isinstance(exc, AssertionError):
        error: SimulationFailure = InvariantViolation(str(exc) or "assertion failed")
    else:
        error = UncaughtError(exc)
    error.__cause__ = exc
    error.location = user_location(exc)  # type: ignore[attr-defined]
    for note in notes:
        error.add_note(note)
    return error


def _either(p: float, q: float) -> float:
    """The chance that at least one of two independent events happens."""
    return 1.0 - (1.0 - p) * (1.0 - q)
