"""The errors seedbed raises, one type per cause.

A failure found in a simulated run is only useful if it can be replayed, so
every `SimulationFailure` carries the seed, the step and virtual time at which
it happened, and the exact command that replays it; `str()` shows them all.
`UsageError` is different: the caller's request was wrong, nothing ran.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BudgetExceeded",
    "CancellationSwallowed",
    "Deadlock",
    "InvariantViolation",
    "LivenessFailure",
    "Nondeterminism",
    "RunContext",
    "SeedbedError",
    "SeedbedWarning",
    "SimulatedFailure",
    "SimulationEscape",
    "SimulationFailure",
    "SimulatorBug",
    "UncaughtError",
    "UsageError",
]


class SeedbedError(Exception):
    """Base class of every error seedbed raises on purpose."""


class UsageError(SeedbedError, ValueError):
    """The call was wrong (a bad argument, a malformed file); nothing was run."""


@dataclass(frozen=True)
class RunContext:
    """Where in which run a failure happened, and how to get back there."""

    seed: int
    step: int
    virtual_time_ns: int
    replay: str
    trace_hash: str | None = None  # the run's trace hash at the failure
    node: str | None = None  # the node whose code failed (or whose step broke a check)

    def describe(self) -> str:
        seconds = self.virtual_time_ns / 1e9
        where = f"  seed={self.seed} step={self.step} t={seconds:.6f}s"
        if self.node is not None:
            where += f" node={self.node}"
        if self.trace_hash is not None:
            where += f" trace_hash={self.trace_hash}"
        view = view_command(self.replay)  # before the replay line, which stays last
        return where + (f"\n  view:   {view}" if view else "") + f"\n  replay: {self.replay}"


_CONTEXT_ATTR = "__seedbed_context__"


def attach_context(error: BaseException, context: RunContext) -> None:
    """Give an error leaving a run its context: a `SimulationFailure` keeps it in
    `context`; any other exception gets it as a note (what a traceback shows)
    and, where it takes attributes, kept for `context_of`."""
    if isinstance(error, SimulationFailure):
        if error.context is None:
            error.context = context
        return
    if any(note.startswith("  seed=") for note in getattr(error, "__notes__", [])):
        return
    error.add_note(context.describe())
    set_context(error, context)


def set_context(error: BaseException, context: RunContext) -> None:
    """Keep `context` as the error's own (`context_of` reads it); no note is added."""
    if isinstance(error, SimulationFailure):
        error.context = context
        return
    with contextlib.suppress(AttributeError, TypeError):  # a type without a __dict__
        setattr(error, _CONTEXT_ATTR, context)


def context_of(error: BaseException | None) -> RunContext | None:
    """The context of the run an error left (see `attach_context`), if known."""
    if isinstance(error, SimulationFailure):
        return error.context
    found = getattr(error, _CONTEXT_ATTR, None)
    return found if isinstance(found, RunContext) else None


def view_command(replay: str) -> str | None:
    """The `seedbed view` command drawing the run a `seedbed run` command replays
    (view takes run's flags), or None when the replay is a Python call."""
    if replay.startswith("seedbed run "):
        return "seedbed view " + replay[len("seedbed run ") :]
    head, found, flags = replay.partition(" seedbed run ")  # uv run ..., python -m ...
    return head + " seedbed view " + flags if found else None


class SimulationFailure(SeedbedError):
    """A simulated run failed. Carries the seed and the command that replays it.

    `context` is filled in by the runner as the error leaves the run, so code
    deep inside the simulation can raise these without knowing the seed.
    """

    def __init__(self, message: str, context: RunContext | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.context = context
        # A scenario's failure report (`seedbed.scenario.FailureReport`); None elsewhere.
        self.report: Any = None

    @property
    def seed(self) -> int | None:
        return self.context.seed if self.context else None

    @property
    def replay(self) -> str | None:
        return self.context.replay if self.context else None

    @property
    def steps(self) -> int | None:
        """Callbacks run when the failure happened."""
        return self.context.step if self.context else None

    @property
    def virtual_time(self) -> float | None:
        """Virtual seconds when the failure happened."""
        return self.context.virtual_time_ns / 1e9 if self.context else None

    @property
    def trace_hash(self) -> str | None:
        """The trace hash when the failure happened: a replay reaches the same."""
        return self.context.trace_hash if self.context else None

    def __str__(self) -> str:
        if self.report is not None:
            return f"{self.message}\n{self.report.describe()}"
        if self.context is None:
            return self.message
        return f"{self.message}\n{self.context.describe()}"


class SimulationEscape(SimulationFailure):
    """Code inside a run reached for the real world (a thread, socket, process...)."""


class Deadlock(SimulationFailure):
    """The main task waits, yet nothing can ever run again."""


class BudgetExceeded(SimulationFailure):
    """A step or virtual-time budget ran out.

    `time_advancing` is False when the budget was spent while virtual time
    stood still apart from callback costs: tasks spin without ever sleeping
    on a timer, which is a livelock rather than a slow run.
    """

    def __init__(
        self, message: str, *, time_advancing: bool, context: RunContext | None = None
    ) -> None:
        super().__init__(message, context)
        self.time_advancing = time_advancing


class CancellationSwallowed(SimulationFailure):
    """A task caught its cancellation and carried on (raised under strict=True)."""


class InvariantViolation(SimulationFailure):
    """A safety property that must always hold did not.

    `assertion` is the failed `always` message without its details, or None:
    sweeps group failures by it, since the details (which node, which entry)
    differ from seed to seed while the broken claim is the same.
    """

    assertion: str | None = None


class LivenessFailure(SimulationFailure):
    """A property that must eventually hold did not, after faults stopped."""


class UncaughtError(SimulationFailure):
    """Code in a scenario's run raised an exception that nothing caught.

    The original exception is `original` (and the `__cause__`); the message
    starts with its type and message.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


class Nondeterminism(SimulationFailure):
    """Two executions of one seed differed; names the first divergent event."""


class SimulatorBug(SimulationFailure):
    """seedbed broke one of its own invariants. Please report it with the seed."""


class SimulatedFailure(Exception):
    """An injected failure: what `await seedbed.failpoint(why)` raises in a simulation.

    An ordinary exception, not a cancellation and not a `SeedbedError`: code
    under test handles it like the I/O error it stands for (a retry loop
    retries it and lets `asyncio.CancelledError` propagate). Left unhandled,
    it fails the run like any other exception a node raises.
    """

    def __init__(self, why: str, location: str | None = None) -> None:
        super().__init__(f"simulated failure: {why}" + (f" (at {location})" if location else ""))
        self.why = why
        self.location = location


class SeedbedWarning(UserWarning):
    """Something will work, but not as deterministically as it should."""
