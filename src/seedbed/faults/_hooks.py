"""The in-code hooks of a run: buggify, failpoints and the assertion catalog.

Production code keeps these calls, so outside a simulation they must cost
next to nothing: each starts with one C call (`asyncio._get_running_loop`)
and a type check, and returns at once unless a seedbed loop is running.

Inside a run the state lives on the loop as one `RunHooks` object, created
on first use, so a plain `seedbed.run`, a `Simulation` and a `Scenario` all
record the same way; a scenario configures it before the run starts.

Buggify follows FoundationDB: a run has buggify on or off (off unless asked
for; on in half of swarm seeds); when on, each call site is enabled or not
once per run, with probability 0.25, the first time it is reached, and an
enabled site fires with probability 0.25 each time. Sites are told apart by
file and line, so two `buggify("slow")` calls in different places are two
sites. Every decision is a labelled draw on the run's "buggify" stream.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import SimulatedFailure, UsageError

SITE_ENABLE_PROBABILITY = 0.25
SITE_FIRE_PROBABILITY = 0.25
_ATTR = "_seedbed_hooks"
_running_loop = asyncio._get_running_loop

# Set while a coverage-guided search collects a run's features: every
# `RunHooks` made meanwhile is appended, so the search reads them after the
# run. Read once per run (when the hooks are made), never per call.
collecting: list[RunHooks] | None = None


class RunHooks:
    """One run's buggify switch, failpoint odds, buggify sites and assertion catalog."""

    __slots__ = ("buggify", "catalog", "coverage", "extremes", "failpoint_probability",
                 "failpoints_raised", "sites", "stream", "times", "trace")  # fmt: skip

    def __init__(self, loop: SeedbedLoop) -> None:
        self.buggify = False
        self.failpoint_probability = 0.0
        self.failpoints_raised = 0  # counted for the fault counts, never hashed
        self.sites: dict[tuple[str, int], bool] = {}  # a lookup, never iterated
        self.stream = loop.entropy.stream("buggify")
        self.trace = loop.trace
        # message -> [kind, evaluated, true, location]; insertion order is run order
        self.catalog: dict[str, list[Any]] = {}
        # `seedbed.coverage` points reached ("name=bucket") and `maximize`/`minimize`
        # extremes ("max name" -> value): a search's features. Each keeps where in
        # the run's draws it was first reached (the best value: last set), when
        # choices are recorded (else 0), so a search can branch from there, and
        # in `times` the virtual time, so a search can put a fault there.
        self.coverage: dict[str, int] = {}
        self.extremes: dict[str, tuple[float, int]] = {}
        self.times: dict[str, float] = {}
        if collecting is not None:
            collecting.append(self)

    def configure(self, *, buggify: bool, failpoint_probability: float) -> None:
        if not 0.0 <= failpoint_probability <= 1.0:
            raise UsageError(
                f"failpoint_probability must be between 0 and 1, got {failpoint_probability!r}"
            )
        self.buggify = bool(buggify)
        self.failpoint_probability = float(failpoint_probability)

    def assertions(self) -> dict[str, dict[str, Any]]:
        """The catalog as JSON-able data: message -> kind, evaluated, true, location."""
        return {
            message: {"kind": kind, "evaluated": evaluated, "true": true, "location": location}
            for message, (kind, evaluated, true, location) in self.catalog.items()
        }


@contextmanager
def catalogs() -> Iterator[list[RunHooks]]:
    """The hook state of every run made inside (as a search collects it, and
    still collected by an outer collector), to read their assertion catalogs:
    how a harness learns the claims of a run it did not build (a plain main,
    an `f(seed)` target)."""
    global collecting
    made: list[RunHooks] = []
    outer = collecting
    collecting = made
    try:
        yield made
    finally:
        collecting = outer
        if outer is not None:
            outer.extend(made)


def merged_assertions(hooks: list[RunHooks]) -> dict[str, dict[str, Any]]:
    """The runs' catalogs as one: per message, evaluations and truths added."""
    merged: dict[str, dict[str, Any]] = {}
    for one in hooks:
        for message, entry in one.assertions().items():
            kept = merged.setdefault(message, {**entry, "evaluated": 0, "true": 0})
            kept["evaluated"] += entry["evaluated"]
            kept["true"] += entry["true"]
    return merged


def hooks_of(loop: SeedbedLoop) -> RunHooks:
    """The loop's hook state, created (buggify off, no failpoints) on first use."""
    hooks: RunHooks | None = loop.__dict__.get(_ATTR)
    if hooks is None:
        hooks = RunHooks(loop)
        setattr(loop, _ATTR, hooks)
    return hooks


def assertions_of(loop: SeedbedLoop) -> dict[str, dict[str, Any]]:
    """The loop's assertion catalog (`RunHooks.assertions`), without making hook
    state for a run that never used any: its catalog is empty (and a scenario
    asks every seed). Made as usual while runs' hooks are being collected."""
    if collecting is None and _ATTR not in loop.__dict__:
        return {}
    return hooks_of(loop).assertions()


def current_hooks() -> RunHooks | None:
    """The running seedbed loop's hook state, or None outside a simulation."""
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return None
    return hooks_of(loop)


def caller_location(depth: int = 2) -> str:
    """'file:line' of the code that called the hook (depth frames up), the file
    relative to the current directory when it is under it."""
    frame = sys._getframe(depth)
    return f"{_shown_path(frame.f_code.co_filename)}:{frame.f_lineno}"


@functools.lru_cache(maxsize=256)
def _shown_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path


def buggify(why: str) -> bool:
    """True when this call site should misbehave now (simulation with buggify on only).

    Use it to make rare paths common under test: `if seedbed.buggify("slow
    flush"): await asyncio.sleep(1)`. Outside a simulation, or in one whose
    buggify is off, it is always False and draws nothing.
    """
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return False
    hooks = loop.__dict__.get(_ATTR) or hooks_of(loop)  # `hooks_of`, inlined: once per call
    if not hooks.buggify:
        return False
    frame = sys._getframe(1)
    site = (frame.f_code.co_filename, frame.f_lineno)
    enabled = hooks.sites.get(site)
    if enabled is None:
        enabled = hooks.stream.chance(SITE_ENABLE_PROBABILITY, f"buggify site enabled: {why}")
        hooks.sites[site] = enabled
    return enabled and hooks.stream.chance(SITE_FIRE_PROBABILITY, f"buggify fires: {why}")


class _Ready:
    """An awaitable that completes at once: what `failpoint` returns when nothing fails."""

    __slots__ = ()
    __await__ = ().__iter__  # a bound C method: no Python frame per await


_READY: Any = _Ready()


class _Raise:
    __slots__ = ("error",)

    def __init__(self, error: SimulatedFailure) -> None:
        self.error = error

    def __await__(self) -> Generator[Any, None, None]:
        raise self.error
        yield  # pragma: no cover - makes this a generator


def failpoint(why: str) -> Any:
    """`await seedbed.failpoint(why)`: may raise `SimulatedFailure` inside a simulation.

    The probability is the run's `failpoint_probability` (a `FaultProfile`
    field; swarm draws it). Outside a simulation it completes at once. The
    failure is an ordinary exception, not a cancellation: a retry loop should
    retry on `SimulatedFailure` and let `CancelledError` propagate.
    """
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return _READY
    hooks = hooks_of(loop)
    probability = hooks.failpoint_probability
    if probability and hooks.stream.chance(probability, f"failpoint: {why}"):
        hooks.trace.emit("failpoint", why)
        hooks.failpoints_raised += 1
        return _Raise(SimulatedFailure(why, caller_location()))
    return _READY


def configure(target: Any, *, buggify: bool = True, failpoint_probability: float = 0.0) -> None:
    """Turn buggify on (or off) and set the failpoint odds for one run.

    `target` is a `Simulation` or a `SeedbedLoop`, configured before it runs.
    A `Scenario` does this itself from its fault profile.
    """
    loop = getattr(target, "loop", target)
    if type(loop) is not SeedbedLoop:
        raise UsageError(f"configure() needs a Simulation or a SeedbedLoop, got {target!r}")
    hooks_of(loop).configure(buggify=buggify, failpoint_probability=failpoint_probability)
