"""Failure reports for the targets that are not Scenarios: a plain async main and
a function `f(seed)` that builds and runs its own `Simulation`.

A Scenario's failure comes with its report (`seedbed.scenario`); these
targets' failures used to come with three lines. Their report is the same
kind: where (the user's line, the node), the story of the world events that
touched the failure (a test's own cuts, crashes, losses), the last events,
and the commands to view, shrink and replay the run. Like a Scenario's, it
runs the seed a second time to read its events: a run keeps none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seedbed._core import Trace
from seedbed._core.trace import recording
from seedbed.aio._state import LoopConfig
from seedbed.aio.runner import execute
from seedbed.errors import context_of
from seedbed.scenario._report import ALL_EVENTS, FailureReport, user_location
from seedbed.scenario._story import EventTap, describe_tail, hushed, subjects_of


def program_report(
    main: Callable[[], Any], seed: int, config: LoopConfig, error: BaseException, replay: str
) -> FailureReport:
    """The report of an async main's failed run under `seed` (with `config`)."""
    tap = EventTap(nemesis=False)
    trace = Trace()
    trace.events = tap  # type: ignore[assignment]
    trace.quiet = False
    with hushed():
        execute(main, seed, config, trace, None)
    return _report(seed, error, replay, tap)


def simulation_report(
    func: Callable[[int], Any], seed: int, error: BaseException, replay: str
) -> FailureReport:
    """The report of a failed `func(seed)`: the events of the last simulation it ran."""
    with hushed(), recording(lambda: EventTap(nemesis=False)) as traces:
        try:
            func(seed)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:
            pass
    tap = EventTap(nemesis=False)
    for trace in traces:  # the last simulation it ran is the one that failed
        events: object = trace.events
        if isinstance(events, EventTap):
            tap = events
    return _report(seed, error, replay, tap)


def _report(seed: int, error: BaseException, replay: str, tap: EventTap) -> FailureReport:
    context = context_of(error)
    names = tuple(tap.nodes)
    node = context.node if context is not None else None
    message = str(getattr(error, "message", None) or error)
    return FailureReport(
        scenario=None,
        seed=seed,
        step=context.step if context is not None else 0,
        virtual_time=context.virtual_time_ns / 1e9 if context is not None else 0.0,
        profile=None,
        params={},
        faults={},
        assertions={},
        location=user_location(error),
        last_events=describe_tail(tap.tail, ALL_EVENTS, draws=True),
        replay=replay,
        names=names,
        node=node,
        story=tap.entries(),
        subjects=subjects_of(message, node, names),
    )
