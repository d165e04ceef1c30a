"""`seedbed explore --exhaustive --max-delays K`: every schedule within K delays.

Random search samples schedules; for a small program whose only choices are
schedules, delay-bounded search (Emmi, Qadeer and Rakamarić, POPL 2011)
runs every one within K deviations from the default FIFO order and so can
say "there is none": K = 2 already covers most concurrency bugs found in
practice, and the number of schedules grows polynomially in the program's
scheduling points, not exponentially.

The search is stateless, depth first: a run replays a prefix of schedule
decisions (`_schedules.Enumerating`) and takes the default at every later
point; each point it passed after the prefix, each other option there
within the remaining delays, is a new prefix. A schedule is made by exactly
one prefix (its decisions up to its last non-default one), so none runs
twice, and the order is fixed: the search repeats exactly. Every other draw
is at its quiet default (the median CPU cost of each callback), so the
timing model is the default one. A program that draws anything else
(network timing, faults, `random`, a uuid) is refused in one line: its
choices are not schedules, and a search that held them fixed could not
claim to have exhausted anything.

A failing schedule ends the search with exit 1, its choices written as a
choice file (`seedbed run TARGET --choices FILE` replays it; `seedbed
shrink` takes it) and saved to the failure database; a search that runs
out of schedules ends with exit 0, saying so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._core import entropy
from seedbed._core.choices import Choice
from seedbed._harness.failures._db import FailureDB
from seedbed._harness.search._schedules import Enumerating, Point, cost_of
from seedbed._harness.shrink._file import RUN_OPTIONS, ChoiceFile, write_choices
from seedbed._harness.shrink._trial import asyncio_log_off, failure_of
from seedbed._harness.targets import run_target
from seedbed.aio._collect import between_runs
from seedbed.aio._interpose import forget_random_use, random_was_used
from seedbed.errors import UsageError

MAX_SCHEDULES = 1_000_000  # a guard: a bound this search cannot finish is refused as such
Prefix = list[tuple[str, str, Any]]  # (stream, reason, value) of each schedule point


@dataclass
class Exhaustive:
    """What to search: a target, the delay bound, run options, where to write."""

    target: str
    max_delays: int
    out: Path
    options: dict[str, Any] = field(default_factory=dict)
    runner: str = "seedbed"
    seed: int = 0
    saved: bool = True  # save a failure to the failure database


@dataclass
class Found:
    """How the search ended."""

    runs: int = 0
    points: int = 0  # the most schedule points one run passed
    failure: dict[str, Any] | None = None
    delays: int = 0  # the failing schedule's
    path: str | None = None
    saved: Path | None = None


def search(spec: Exhaustive, obj: Any) -> Found:
    """Run every schedule within `spec.max_delays` delays, or until one fails."""
    if spec.options.get("strategy") not in (None, "random"):
        raise UsageError("--exhaustive enumerates schedules itself: drop --strategy")
    found = Found()
    stack: list[tuple[Prefix, int]] = [([], 0)]
    with asyncio_log_off():
        while stack:
            prefix, spent = stack.pop()
            if found.runs >= MAX_SCHEDULES:
                raise UsageError(
                    f"more than {MAX_SCHEDULES} schedules within {spec.max_delays} delays: "
                    "give a smaller --max-delays, or search without --exhaustive"
                )
            session, error = _run(spec, obj, prefix)
            found.runs += 1
            found.points = max(found.points, len(session.points))
            if error is not None:
                _failed(spec, found, session, error)
                return found
            stack.extend(reversed(_children(session.points, len(prefix), spec.max_delays - spent,
                                            spent)))  # fmt: skip
    return found


def _run(spec: Exhaustive, obj: Any, prefix: Prefix) -> tuple[Enumerating, BaseException | None]:
    decisions = [Choice(stream, reason, value, index)
                 for index, (stream, reason, value) in enumerate(prefix)]  # fmt: skip
    session = Enumerating(decisions)
    given = {key: value for key, value in spec.options.items() if value not in (None, False)}
    previous = entropy.choice_session
    entropy.choice_session = session
    forget_random_use()
    try:
        try:
            error = run_target(obj, spec.seed, last_events=False, **given).error
        except UsageError:
            raise
        except Exception as exc:  # a failure outside the simulation proper
            error = exc
    finally:
        entropy.choice_session = previous
    between_runs()
    _refuse_other_choices(spec, session)
    passed = [(p.stream, p.reason, p.value) for p in session.points[: len(prefix)]]
    if passed != prefix:  # the same decisions led elsewhere: the search would be unsound
        pairs = zip(passed, prefix, strict=False)  # `passed` may be the shorter
        at = next((i for i, (a, b) in enumerate(pairs) if a != b), len(passed))
        raise UsageError(
            f"{spec.target} ran differently under the same schedule decisions (at schedule "
            f"point {at}): "
            "something outside seedbed's reach decides its runs; `seedbed check-determinism` "
            "names it"
        )
    return session, error


def _refuse_other_choices(spec: Exhaustive, session: Enumerating) -> None:
    if session.others:
        stream, reason = session.others[0]
        raise UsageError(
            f"explore --exhaustive enumerates schedules only, and {spec.target} also draws "
            f"{reason!r} (stream {stream!r}): network timing, faults or data are no schedule "
            "choice; search it without --exhaustive (or give it no network, faults or "
            "randomness)"
        )
    if random_was_used():
        raise UsageError(
            f"explore --exhaustive enumerates schedules only, and {spec.target} draws from the "
            "random module: its data is no schedule choice; search it without --exhaustive"
        )


def _children(points: list[Point], start: int, budget: int, spent: int) -> list[tuple[Prefix, int]]:
    """The prefixes that branch from this run after its own decisions, in order."""
    children: list[tuple[Prefix, int]] = []
    if budget <= 0:
        return children
    taken: Prefix = [(p.stream, p.reason, p.value) for p in points[:start]]
    for index in range(start, len(points)):
        point = points[index]
        for value, cost in point.alternatives(budget):
            children.append(([*taken, (point.stream, point.reason, value)], spent + cost))
        taken.append((point.stream, point.reason, None))
    return children


def _failed(spec: Exhaustive, found: Found, session: Enumerating, error: BaseException) -> None:
    found.failure = failure_of(error)
    found.delays = sum(cost_of(point) for point in session.points)
    options = {key: value for key, value in spec.options.items()
               if key in RUN_OPTIONS and value not in (None, False)}  # fmt: skip
    saved = ChoiceFile(spec.target, spec.seed, list(session.choices), options, found.failure)
    (spec.out / "failures").mkdir(parents=True, exist_ok=True)
    path = spec.out / "failures" / f"exhaustive-{spec.max_delays}.json"
    write_choices(path, saved)
    found.path = str(path)
    if spec.saved:
        try:
            found.saved = FailureDB(spec.target).save_choices(saved, "explore", spec.runner)
        except OSError:
            found.saved = None  # the choice file above is what the summary points to


def summary_lines(spec: Exhaustive, found: Found) -> list[str]:
    """What the search did, as the command prints it."""
    bound = f"{spec.max_delays} delay{'s' if spec.max_delays != 1 else ''}"
    head = f"exhaustive search of {spec.target} within {bound}"
    if found.failure is None:
        return [
            f"{head}: the space is exhausted: {found.runs} schedules run, none fails "
            f"(at most {found.points} schedule points in a run)"
        ]
    what = f"{found.failure.get('error_type')}: {found.failure.get('message')}"
    delays = f"{found.delays} delay{'s' if found.delays != 1 else ''}"
    lines = [
        f"{head}: schedule {found.runs} fails ({delays} from the default order)",
        f"  {what}",
        f"  replay: {spec.runner} run {spec.target} --choices {found.path}",
        f"  shrink: {spec.runner} shrink {spec.target} --choices {found.path}",
    ]
    if found.saved is not None:
        lines.append(f"saved to {found.saved.parent}: replayed first next time")
    return lines
