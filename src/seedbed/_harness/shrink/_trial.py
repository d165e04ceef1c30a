"""One run of a target under a list of choices: what failed, how far it got.

A trial replays `source` leniently (or records fresh draws when `source` is
None) and keeps what the run actually chose, so a shrinker can adopt the
choices of a smaller run as they were used, defaults filled in.
"""

from __future__ import annotations

import gc
import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from seedbed._core import choices
from seedbed._core.choices import Choice
from seedbed._harness.shrink._lanes import lanes_off_typical
from seedbed._harness.sweeps._record import error_bucket, first_line, leaf_error, mask_message
from seedbed._harness.targets import run_target
from seedbed.errors import UsageError


@dataclass(frozen=True)
class Trial:
    """A finished run: its failure (type, bucket, first line; None if it
    passed), steps, faults injected (per kind) and the choices it made. The
    exception itself is not kept: its traceback holds the whole world."""

    failure: dict[str, Any] | None
    steps: int
    faults: dict[str, Any]
    chosen: list[Choice]
    virtual_time: float | None
    phase_ended: float | None = None  # a scenario's fault phase, if it ended

    @property
    def bucket(self) -> str | None:
        return self.failure["bucket"] if self.failure is not None else None

    @property
    def signature(self) -> tuple[str, str] | None:
        """What makes two failures the same for a shrinker: the bucket (the
        failure's identity, as the sweep groups it: `failure_identity`) and the
        problems a broken claim's details name (see `problems_of`)."""
        if self.failure is None:
            return None
        return self.failure["bucket"], self.failure.get("problems", "")

    @property
    def fault_count(self) -> int:
        return sum(int(counts.get("injected", 0)) for counts in self.faults.values())

    @property
    def loud(self) -> int:
        """How many choices deviate from their typical default."""
        return sum(1 for choice in self.chosen if not is_quiet(choice.value))

    @property
    def loud_lanes(self) -> int:
        """How many 32-bit lanes of the raw-bit draws are off their typical middle
        value (a batch of latencies: roughly, its hops that are not median)."""
        return sum(lanes_off_typical(choice.value) for choice in self.chosen)


def failure_of(error: BaseException | None) -> dict[str, Any] | None:
    """The failure as a choice file names it: type, bucket and first line."""
    if error is None:
        return None
    leaf = leaf_error(error)
    error_type, message = type(leaf).__name__, first_line(leaf)
    failure = {"error_type": error_type, "bucket": error_bucket(error), "message": message}
    problems = problems_of(leaf)
    if problems:
        failure["problems"] = problems
    return failure


_TEXT_DETAIL = re.compile(r"""\w+=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


_WORDS = 3  # a detail of fewer words ("term 2: noop", "n2") names a thing, not a problem


def problems_of(leaf: BaseException) -> str:
    """The gist of a broken `always` claim's free-text details ("problems=
    'history not linearizable: ...'"), numbers masked: each sentence up to its
    first colon. The sweep buckets by the claim alone; a shrinker must not
    trade the failure a user saw for another the same claim reports ("transactions
    not strictly serializable"). Identifier-like details (node='n2') may change."""
    claim = getattr(leaf, "assertion", None)
    message = first_line(leaf)
    if not isinstance(claim, str) or not message.startswith(claim):
        return ""
    gists = []
    for found in _TEXT_DETAIL.finditer(message[len(claim) :]):
        for sentence in found.group(1)[1:-1].split("; "):
            gist = mask_message(sentence.split(":")[0].split("\\n")[0].strip())
            if gist.count(" ") >= _WORDS - 1:
                gists.append(gist)
    return "; ".join(gists)


def run_trial(
    obj: Any,
    seed: int,
    source: Sequence[Choice] | None,
    options: dict[str, Any],
    *,
    trace: str | None = None,
) -> Trial:
    """Run `obj` once under `source` (None: draw afresh), writing its events to
    `trace` if given. A scenario's failure report skips its last events (a
    second run): trials want speed, and the story reads them from `trace`."""
    with choices.session(source) as made:
        try:
            error, steps, faults, vt = _run(obj, seed, options, trace)
        except UsageError:
            raise
        except Exception as exc:  # a failure outside the simulation proper
            error, steps, faults, vt = exc, 0, {}, None
    return Trial(failure_of(error), steps, dict(faults), list(made.choices), vt, made.phase_ended)


def _run(
    obj: Any, seed: int, options: dict[str, Any], trace: str | None
) -> tuple[BaseException | None, int, dict[str, Any], float | None]:
    given = {key: value for key, value in options.items() if value is not None}
    outcome = run_target(obj, seed, trace=trace, last_events=False, **given)
    return outcome.error, outcome.steps or 0, outcome.faults or {}, outcome.virtual_time


@contextmanager
def asyncio_log_off() -> Iterator[None]:
    """asyncio's and seedbed's loggers off: the tasks that trial runs leave
    failed are collected with "exception was never retrieved" tracebacks, by
    the hundred."""
    loggers = [logging.getLogger(name) for name in ("asyncio", "seedbed")]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        gc.collect()  # while still off: what the trials left goes now
        for logger, was in zip(loggers, before, strict=True):
            logger.disabled = was


def is_quiet(value: Any) -> bool:
    """Whether a recorded value is its draw's typical default (logged as None) or
    reads like one: the first option, a chance that did not happen, a zero wait,
    the identity order (FIFO)."""
    if value is None or (isinstance(value, int | float) and value == 0):
        return True
    if isinstance(value, str) and "," in value:
        return value.split(",") == [str(i) for i in range(value.count(",") + 1)]
    return False
