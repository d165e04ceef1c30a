"""Minimizing a failing run's choices while the same failure still happens.

The same failure is the sweep's bucket: the error type and first line of the
message with numbers masked. A candidate list of choices is kept when its run
fails in that bucket, no later than the best run so far (each trial's step
budget is the best run's length, so a trial that wanders off ends early), and
is simpler: fewer faults, then fewer steps, then fewer choices away from
their quiet default, then fewer choices. The passes, greedy, repeated while
any helps and the wall-clock budget lasts:

1. per stream, delete chunks of its loud draws, halving the chunk down to
   single draws (dropping a fault, a retry, the tail of a run);
2. each loud number set to 0 (a fault at once, no wait);
3. quiet a whole stream (no faults at all, no latency variation, ...);
4. quiet every draw of one reason (numbers masked: "latency n1->n2");
5. chunks quieted instead of deleted (a delay to its minimum).

Streams go smallest first (fewest draws away from their default): the
nemesis's and buggify's few decisions before the disks' and the network's
many, so the budget goes first to dropping faults, which also shortens runs
and so makes every later trial cheaper.

The budget makes a shrink's result depend on the machine's speed only when
it runs out; the result says whether it did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from seedbed._core.choices import Choice
from seedbed._shrink._trial import Trial, is_quiet, run_trial
from seedbed._sweep._record import mask_numbers
from seedbed.errors import UsageError


class NotFailing(UsageError):
    """The target passes under the seed: there is nothing to shrink."""


@dataclass(frozen=True)
class Shrunk:
    """The first run and the smallest run found with the same failure."""

    original: Trial
    best: Trial
    trials: int
    seconds: float
    out_of_time: bool


class Shrinker:
    """Greedy delta debugging over one failing run's choices."""

    def __init__(
        self,
        obj: Any,
        seed: int,
        options: dict[str, Any],
        budget: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.obj, self.seed, self.options, self.budget = obj, seed, options, budget
        self.clock = clock
        self.trials = 0
        self.out_of_time = False
        self.deadline = 0.0
        self.best: Trial | None = None
        self.bucket: str | None = None

    def shrink(self, source: Sequence[Choice] | None = None) -> Shrunk:
        """Shrink the run under `source` (None: the seed's own draws)."""
        started = self.clock()
        self.deadline = started + self.budget
        original = run_trial(self.obj, self.seed, source, self.options)
        if original.bucket is None:
            raise NotFailing(f"the target passes under seed {self.seed}: nothing to shrink")
        self.best, self.bucket = original, original.bucket
        passes = (self._delete_chunks, self._zero_numbers, self._quiet_streams,
                  self._quiet_reasons, self._quiet_chunks)  # fmt: skip
        improved = True
        while improved and not self._late():
            improved = False
            for step in passes:
                improved = step() or improved
        return Shrunk(original, self.best, self.trials, self.clock() - started, self.out_of_time)

    # -- trials -----------------------------------------------------------------

    def _late(self) -> bool:
        if self.clock() >= self.deadline:
            self.out_of_time = True
        return self.out_of_time

    def _try(self, candidate: list[Choice]) -> bool:
        """Run `candidate`; adopt what it chose if it is the same failure, simpler."""
        best = self.best
        assert best is not None
        if self._late():
            return False
        options = dict(self.options)
        cap = best.steps + 1 if best.steps else None
        if cap is not None and not _builds_own_world(self.obj):
            options["max_steps"] = min(cap, options.get("max_steps") or cap)
        self.trials += 1
        trial = run_trial(self.obj, self.seed, candidate, options)
        if trial.bucket != self.bucket or not _simpler(trial, best):
            return False
        self.best = trial
        return True

    @property
    def _chosen(self) -> list[Choice]:
        assert self.best is not None
        return self.best.chosen

    # -- passes -----------------------------------------------------------------

    def _quiet_streams(self) -> bool:
        names = _loud_counts(self._chosen, lambda c: c.stream)
        return self._quiet_each(names, lambda c: c.stream)

    def _quiet_reasons(self) -> bool:
        def group(choice: Choice) -> str:
            return f"{choice.stream}\0{mask_numbers(choice.reason)}"

        return self._quiet_each(_loud_counts(self._chosen, group), group)

    def _quiet_each(self, keys: list[str], key_of: Callable[[Choice], str]) -> bool:
        improved = False
        for key in keys:
            candidate = [_quieted(c) if key_of(c) == key else c for c in self._chosen]
            improved = self._try(candidate) or improved
        return improved

    def _delete_chunks(self) -> bool:
        return self._chunks(lambda chosen, doomed: [c for c in chosen if c.order not in doomed])

    def _quiet_chunks(self) -> bool:
        return self._chunks(
            lambda chosen, doomed: [_quieted(c) if c.order in doomed else c for c in chosen]
        )

    def _chunks(self, edit: Callable[[list[Choice], set[int]], list[Choice]]) -> bool:
        """Per stream (fewest loud draws first), chunks of its loud draws from
        the end backwards, halving the chunk size down to one draw."""
        improved = False
        for name in _loud_counts(self._chosen, lambda c: c.stream):
            size = max(1, len(self._loud_in(name)) // 2)
            while size >= 1 and not self._late():
                end = len(self._loud_in(name))
                while end > 0 and not self._late():
                    loud = self._loud_in(name)
                    end = min(end, len(loud))
                    doomed = {c.order for c in loud[max(0, end - size) : end]}
                    if self._try(edit(self._chosen, doomed)):
                        improved = True
                    end -= size
                size //= 2
        return improved

    def _loud_in(self, stream: str) -> list[Choice]:
        return [c for c in self._chosen if c.stream == stream and not is_quiet(c.value)]

    def _zero_numbers(self) -> bool:
        improved = False
        for name in _loud_counts(self._chosen, lambda c: c.stream):
            for choice in self._loud_in(name):
                if self._late():
                    return improved
                if isinstance(choice.value, int | float) and choice in self._chosen:
                    zeroed = replace(choice, value=0)
                    candidate = [zeroed if c == choice else c for c in self._chosen]
                    improved = self._try(candidate) or improved
        return improved


def _quieted(choice: Choice) -> Choice:
    return choice if choice.value is None else replace(choice, value=None)


def _loud_counts(chosen: list[Choice], key_of: Callable[[Choice], str]) -> list[str]:
    """Keys with loud choices, fewest loud first (ties in first-draw order)."""
    counts: dict[str, int] = {}
    for choice in chosen:
        if not is_quiet(choice.value):
            counts[key_of(choice)] = counts.get(key_of(choice), 0) + 1
    return sorted(counts, key=lambda key: counts[key])


def _simpler(trial: Trial, best: Trial) -> bool:
    if trial.steps > best.steps:
        return False
    return _size(trial) < _size(best)


def _size(trial: Trial) -> tuple[int, int, int, int]:
    return (trial.fault_count, trial.steps, trial.loud, len(trial.chosen))


def _builds_own_world(obj: Any) -> bool:
    """A function f(seed) that builds its own Simulation takes no run options."""
    import inspect

    from seedbed.scenario import Scenario

    if isinstance(obj, Scenario) or inspect.iscoroutinefunction(obj):
        return False
    try:
        parameters = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return False
    return len([p for p in parameters if p.default is inspect.Parameter.empty]) == 1
