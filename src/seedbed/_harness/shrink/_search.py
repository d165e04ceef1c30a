"""Minimizing a failing run's choices while the same failure still happens.

The same failure is the failure's identity, the sweep's bucket
(`failure_identity`: its kind, the user's file:line, the claim's name or the
message with ids, numbers, node names and collection order masked) and, for
a broken claim, the problems its details name (`Trial.signature`): "history
not linearizable" is not traded for "transactions not strictly
serializable". A candidate list of choices is kept when
its run fails so and is simpler: fewer faults, then fewer steps, then fewer
choices away from their quiet default, then fewer choices. A trial stops one
step after the best run's failure (past it, it cannot be simpler), or, when
it drops a fault (which may move the failure later), after the original's.

The passes, cheapest per step saved first, repeated while any helps and the
wall-clock budget lasts:

1. cut a scenario's fault phase (`choices.setting`), when the failure came
   after it: its checks run soon after, so a failure found by a check at the
   end (a history checker) comes as soon as what it needs has happened;
2. drop the nemesis's rounds (a fault and its details) by halves, then
   quarters, down to one (delta debugging), the waits carried over;
3. the last fault alone, sooner or at its time: a fault that must land in a
   narrow window rarely survives dropping the others one by one;
4. bring each fault sooner (its wait to 0, else the smallest of 1/64, 1/32
   and the sixteenths of it that keeps the failure; a cut phase ends as
   much sooner), then cut again;
5. quiet a whole stream, then every draw of one reason (numbers masked);
6. each loud number to 0, else the smallest of 1/16, 1/8, 1/4, 1/2 of it;
7. per stream, delete chunks of its loud draws, the whole list first, then
   halving the chunk down to single draws; then the same chunks quieted;
8. inside each batch of raw bits still loud (a link's 64 latencies are one
   draw), make chunks of its 32-bit lanes typical (the middle value: a
   median hop), halving the chunk down to one lane: a failure that needs one
   slow round trip keeps that one, not the batch's every spike.

A dropped draw takes its typical default (`seedbed._core.choices`): the
median hop, no loss, FIFO; never an extreme branch, so shrinking keeps a run
typical rather than making every hop a tail spike.

Streams go smallest first (fewest draws away from their default): the
nemesis's and buggify's few decisions before the disks' and the network's
many. The budget makes a shrink's result depend on the machine's speed only
when it runs out; the result says whether it did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from seedbed._core.choices import Choice, Value
from seedbed._core.floats import ordered_sum
from seedbed._harness.shrink._lanes import is_bits, lanes_of, with_typical_lanes
from seedbed._harness.shrink._trial import Trial, asyncio_log_off, is_quiet, run_trial
from seedbed._harness.sweeps._record import mask_numbers
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
        self.cap: int | None = None  # the longest a trial may run: the original run
        self.signature: tuple[str, str] | None = None

    def shrink(self, source: Sequence[Choice] | None = None) -> Shrunk:
        """Shrink the run under `source` (None: the seed's own draws)."""
        started = self.clock()
        self.deadline = started + self.budget
        original = run_trial(self.obj, self.seed, source, self.options)
        if original.signature is None:
            raise NotFailing(f"the target passes under seed {self.seed}: nothing to shrink")
        self.best, self.signature = original, original.signature
        self.cap = original.steps + 1 if original.steps else None
        with asyncio_log_off():  # hundreds of trials: their dropped tasks' errors are noise
            self._search()
        return Shrunk(original, self.best, self.trials, self.clock() - started, self.out_of_time)

    def _search(self) -> None:
        passes = (self._shorten, self._drop_rounds, self._keep_one, self._sooner, self._shorten,
                  self._quiet_streams, self._quiet_reasons, self._smaller_numbers,
                  self._delete_chunks, self._quiet_chunks, self._typical_lanes)  # fmt: skip
        improved = True
        while improved and not self._late():
            improved = False
            for step in passes:
                improved = step() or improved

    # -- trials -----------------------------------------------------------------

    def _late(self) -> bool:
        if self.clock() >= self.deadline:
            self.out_of_time = True
        return self.out_of_time

    def _try(
        self, candidate: list[Choice], *, fewer_faults: bool = False, by: float | None = None
    ) -> bool:
        """Run `candidate`; adopt what it chose if it is the same failure, simpler.

        A trial stops one step after the best run failed: past that it cannot
        be simpler, unless it drops a fault (`fewer_faults`), which may move
        the failure later: such a trial may run as long as the original, or
        until virtual time `by` (a fault brought sooner fails sooner)."""
        best = self.best
        assert best is not None
        if self._late():
            return False
        options = dict(self.options)
        cap = self.cap if fewer_faults or not best.steps else best.steps + 1
        if cap is not None and not builds_own_world(self.obj):
            options["max_steps"] = min(cap, options.get("max_steps") or cap)
            if by is not None:
                options["max_time"] = min(by, options.get("max_time") or by)
        self.trials += 1
        trial = run_trial(self.obj, self.seed, candidate, options)
        if trial.signature != self.signature or not _size(trial) < _size(best):
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

    def _shorten(self) -> bool:
        """Cut a scenario's fault phase (`choices.setting`) to the shortest of
        a few fractions of the time of the failure that keeps it, then bisect
        between that and the longest shorter cut: the run ends soon after its
        fault phase (its liveness checks run then), so this is the biggest
        cut, tried first. A scan first, not a bisection: the outcome is not
        monotone in the cut (a cut too short trades the failure for another).
        A trial cut at d costs about d: the fractions are few."""
        setting, best = self._setting(), self.best
        if setting is None or best is None or best.virtual_time is None:
            return False
        if best.phase_ended is None:  # it failed within the phase: a cut would lose it
            return False
        longest = best.virtual_time
        if isinstance(setting.value, float):
            longest = min(longest, setting.value)
        lost = 0.0
        for kept in (longest * fraction for fraction in _CUTS):
            if self._try(self._with_setting(kept)):
                break
            lost = kept
        else:
            return False
        for _ in range(_BISECTIONS):
            middle = (lost + kept) / 2
            if self._try(self._with_setting(middle)):
                kept = middle
            else:
                lost = middle
        return True

    def _setting(self) -> Choice | None:
        return next((c for c in self._chosen if (c.stream, c.reason) == PHASE), None)

    def _with_setting(self, seconds: float) -> list[Choice]:
        setting = self._setting()
        assert setting is not None
        return self._with(setting.order, seconds)

    def _drop_rounds(self) -> bool:
        """Drop chunks of the nemesis's rounds (a round: the draws from one
        "time to next fault" to the next, a fault and its details): half of
        them at once first, then halving the chunk down to one round (delta
        debugging: with few faults that matter, big cuts succeed and cost one
        trial each). A dropped round's wait is added to the next one, so later
        rounds keep their time."""
        improved = False
        size = max(1, len(_round_heads(self._in(NEMESIS))) // 2)
        while size >= 1 and not self._late():
            first = 0
            while first < len(_round_heads(self._in(NEMESIS))) and not self._late():
                if self._drop(first, size):
                    improved = True
                else:
                    first += size
            size //= 2
        return improved

    def _drop(self, first: int, count: int) -> bool:
        candidate = self._without_rounds(NEMESIS, first, count)
        return candidate is not None and self._try(candidate, fewer_faults=True)

    def _keep_one(self) -> bool:
        """The last fault injected alone (the one that broke the run, most
        likely), sooner (`_FINE` of its time, soonest first), else at its time.
        Dropping the faults before it one by one rarely works when the fatal
        fault must land in a narrow window: each dropped fault moves the
        system's timing at that moment. Alone, at a few times, it often does."""
        mine = self._in(NEMESIS)
        heads = [*_round_heads(mine), len(mine)]
        faults = [i for i in range(len(heads) - 1) if heads[i + 1] - heads[i] > 1]
        for kept in reversed(faults[-_KEEP_TRIES:]):  # a round of a wait alone has no fault
            for scale in (*_FINE, 1.0):
                candidate = self._only_round(kept, scale)
                if candidate is None:
                    break
                if self._try(candidate, fewer_faults=True, by=self._by(kept, scale)):
                    return True
        return False

    def _by(self, kept: int, scale: float) -> float | None:
        """When a trial of round `kept` alone at `scale` of its time may stop:
        as long after the fault as the best run failed after it, twice, and a
        second (None at its own time: the original's budget)."""
        best = self.best
        assert best is not None
        if scale == 1.0 or best.virtual_time is None:
            return None
        mine = self._in(NEMESIS)
        heads = _round_heads(mine)
        waits = [mine[i].value for i in heads[: kept + 1]]
        at = ordered_sum(wait for wait in waits if isinstance(wait, float))
        return scale * at + 2 * max(0.0, best.virtual_time - at) + 1.0

    def _only_round(self, kept: int, scale: float) -> list[Choice] | None:
        """The best run with the nemesis's round `kept` alone, its wait the time
        it was injected at times `scale` (None: that is no fewer faults)."""
        mine = self._in(NEMESIS)
        heads = [*_round_heads(mine), len(mine)]
        if kept >= len(heads) - 1 or len(heads) <= 2:
            return None
        waits = [mine[heads[i]].value for i in range(kept + 1)]
        if not all(isinstance(wait, float) for wait in waits):
            return None
        head = mine[heads[kept]]
        was = ordered_sum(wait for wait in waits if isinstance(wait, float))
        keep = {c.order for c in mine[heads[kept] : heads[kept + 1]]}
        alone = [
            replace(c, value=scale * was) if c.order == head.order else c
            for c in self._chosen
            if c.stream != NEMESIS or c.order in keep
        ]
        return self._phase_sooner(alone, (1.0 - scale) * was)

    def _without_rounds(self, stream: str, first: int, count: int) -> list[Choice] | None:
        """The best run without rounds [first, first + count) of `stream`, the
        next wait being the dropped ones added to it."""
        mine = self._in(stream)
        heads = [*_round_heads(mine), len(mine)]
        first, last = min(first, len(heads) - 1), min(first + count, len(heads) - 1)
        doomed = {c.order for c in mine[heads[first] : heads[last]]}
        if last >= len(heads) - 1:  # the last rounds: no later wait to carry them over to
            return [c for c in self._chosen if c.order not in doomed]
        after = mine[heads[last]]
        waits = [mine[heads[i]].value for i in range(first, last + 1)]
        carried: Value = after.value
        if all(isinstance(wait, float) for wait in waits):
            carried = ordered_sum(wait for wait in waits if isinstance(wait, float))
        return [
            replace(c, value=carried) if c.order == after.order else c
            for c in self._chosen
            if c.order not in doomed
        ]

    def _in(self, stream: str) -> list[Choice]:
        return [c for c in self._chosen if c.stream == stream]

    def _delete_chunks(self) -> bool:
        return self._chunks(lambda chosen, doomed: [c for c in chosen if c.order not in doomed])

    def _quiet_chunks(self) -> bool:
        return self._chunks(
            lambda chosen, doomed: [_quieted(c) if c.order in doomed else c for c in chosen]
        )

    def _chunks(self, edit: Callable[[list[Choice], set[int]], list[Choice]]) -> bool:
        """Per stream (fewest loud draws first), chunks of its loud draws from
        the end backwards, halving the chunk size down to one draw, or to a
        `_FINEST_CHUNKS`th of the stream: a disk's thousand latencies one by
        one would spend the budget before the passes that bring faults sooner
        run again."""
        improved = False
        for name in _loud_counts(self._chosen, lambda c: c.stream):
            size = len(self._loud_in(name))
            smallest = max(1, size // _FINEST_CHUNKS)
            while size >= smallest and not self._late():
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

    def _typical_lanes(self) -> bool:
        """Each loud batch of raw bits, its 32-bit lanes made typical in chunks
        (halves first, down to single lanes) while the failure stays."""
        improved = False
        for order in [c.order for c in self._chosen if is_bits(c.value)]:
            size = lanes_of(self._value_at(order)) // 2
            while size >= 1 and not self._late():
                start = 0
                while start < lanes_of(self._value_at(order)) and not self._late():
                    value = self._value_at(order)
                    typical = with_typical_lanes(value, start, size)
                    if typical != value and self._try(self._with(order, typical)):
                        improved = True
                    start += size
                size //= 2
        return improved

    def _value_at(self, order: int) -> Value:
        return next((c.value for c in self._chosen if c.order == order), None)

    def _loud_in(self, stream: str) -> list[Choice]:
        return [c for c in self._chosen if c.stream == stream and not is_quiet(c.value)]

    def _sooner(self) -> bool:
        """Each wait of the nemesis before a fault, first to last, to 0, else
        to the smallest of `_FINE` of it that keeps the failure: the failure
        comes sooner (the first wait moves every fault), and a fault that
        matters must land in a narrow window (a crash between a write's fsync
        and its answer), which coarse fractions step over."""
        improved, index = False, 0
        while not self._late():
            mine = self._in(NEMESIS)
            waits = [mine[i] for i in _round_heads(mine) if isinstance(mine[i].value, int | float)]
            if index >= len(waits):
                return improved
            improved = self._lower(waits[index], _FINE, shift=True)[1] or improved
            index += 1
        return improved

    def _smaller_numbers(self) -> bool:
        """Each loud number to 0, else a fraction of it, while that keeps the
        failure: in streams of a few decisions (a disk's thousand latencies
        go to their minimum in chunks, in `_quiet_chunks`)."""
        improved = False
        for name in _loud_counts(self._chosen, lambda c: c.stream):
            if len(self._loud_in(name)) > _FINEST_CHUNKS:
                continue
            index = 0
            while not self._late():
                numbers = [c for c in self._loud_in(name) if isinstance(c.value, int | float)]
                if index >= len(numbers):
                    break
                zeroed, lowered = self._lower(numbers[index], _FRACTIONS)
                improved = improved or lowered
                index += 0 if zeroed else 1
        return improved

    def _lower(
        self, choice: Choice, fractions: Sequence[float], *, shift: bool = False
    ) -> tuple[bool, bool]:
        """(set to 0, made smaller at all) for one loud number of the best run:
        0, else the smallest of `fractions` of it that keeps the failure (a
        fault must often land in a window: halving alone steps over it).
        With `shift` (a wait), a cut fault phase ends as much sooner."""
        value = choice.value
        assert isinstance(value, int | float)
        for fraction in (0.0, *fractions):
            smaller = int(value * fraction) if isinstance(value, int) else value * fraction
            if fraction and is_quiet(smaller):
                continue
            candidate = self._with(choice.order, smaller)
            if shift:
                candidate = self._phase_sooner(candidate, float(value - smaller))
            if self._try(candidate):
                return not fraction, True
        return False, False

    def _with(self, order: int, value: Value) -> list[Choice]:
        return [replace(c, value=value) if c.order == order else c for c in self._chosen]

    def _phase_sooner(self, candidate: list[Choice], seconds: float) -> list[Choice]:
        """`candidate` with a cut fault phase ending `seconds` sooner, as its
        faults now come: a failure found by a check at the end of the phase
        (a history checker) comes sooner with them. An uncut phase stays."""
        return [
            replace(c, value=max(0.0, c.value - seconds))
            if (c.stream, c.reason) == PHASE and isinstance(c.value, float)
            else c
            for c in candidate
        ]


_FRACTIONS = (1 / 16, 1 / 8, 1 / 4, 1 / 2)  # smallest first
# For the waits before faults, soonest first: a fault that matters often must
# land in a window a few milliseconds wide (the counter's partition).
_FINE = (1 / 64, 1 / 32, *(k / 16 for k in range(1, 16)))
_KEEP_TRIES = 1  # the last faults `_keep_one` tries alone
_CUTS = (0.0, 1 / 8, 1 / 4, 1 / 2, 3 / 4)  # of the failure's time: where `_shorten` looks
_BISECTIONS = 4  # then the cut to within a 16th of the gap between kept and lost
_FINEST_CHUNKS = 32  # the smallest chunk: a 32nd of a long stream
NEMESIS = "nemesis"  # the stream whose rounds are faults
PHASE = ("scenario", "fault phase seconds")  # the setting `Scenario` reads (see choices.setting)


def _round_heads(mine: list[Choice]) -> list[int]:
    """Positions of the stream's first reason that recurs: where its rounds begin."""
    seen: dict[str, int] = {}
    for choice in mine:
        seen[choice.reason] = seen.get(choice.reason, 0) + 1
    head = next((c.reason for c in mine if seen[c.reason] > 1), None)
    return [i for i, c in enumerate(mine) if c.reason == head]


def _quieted(choice: Choice) -> Choice:
    return choice if choice.value is None else replace(choice, value=None)


def _loud_counts(chosen: list[Choice], key_of: Callable[[Choice], str]) -> list[str]:
    """Keys with loud choices, fewest loud first (ties in first-draw order)."""
    counts: dict[str, int] = {}
    for choice in chosen:
        if not is_quiet(choice.value):
            counts[key_of(choice)] = counts.get(key_of(choice), 0) + 1
    return sorted(counts, key=lambda key: counts[key])


def _size(trial: Trial) -> tuple[int, int, int, int, int]:
    """Simpler is fewer faults, then fewer steps, then fewer draws off their
    typical default, then fewer raw-bit lanes off it (fewer slow hops), then
    fewer draws."""
    return (trial.fault_count, trial.steps, trial.loud, trial.loud_lanes, len(trial.chosen))


def builds_own_world(obj: Any) -> bool:
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
