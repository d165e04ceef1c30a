"""Schedule choices, one run at a time: which draws are schedules, what each costs.

A run under `Enumerating` replays a given list of schedule decisions and
takes every other draw at its quiet default (`choices.ReplayingStream`):
FIFO orders, median CPU costs. It notes each schedule point it passes (the
stream, the reason, how many options, the option taken) and every draw that
is no schedule choice, so the search can branch at the points and refuse a
program that also draws network timing, faults or data.

The cost of a decision is its number of delays, in the sense of
delay-bounded scheduling (Emmi, Qadeer and Rakamarić, POPL 2011): the
default order runs what is ready first-in first-out, and each delay defers
the task that would run next behind one more. Choosing option i of a pick
costs i; an order of n ready steps costs its inversions (the sum of its
Lehmer code), the delays that turn FIFO into it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from seedbed._core.choices import Choice, ChoiceSession, ReplayingStream, Value
from seedbed._core.entropy import Stream
from seedbed._core.trace import Trace

# The loop's schedule choices (stream "loop"): the order of steps and timers
# that are ready at once, and which parked task, thread lane or node goes next.
ORDERS = ("order of task steps ready together", "order of timers due at one instant")
PICKS = ("which parked task resumes", "which node runs next",
         "turn of a large batch of task steps ready together",
         "window of a large batch of task steps")  # fmt: skip
SCHEDULE_STREAM = "loop"
# Draws that set a run up, not its data: taken at their defaults, they fix the
# timing model (every callback its median CPU cost) and seed `random`, whose
# use `aio._interpose.random_was_used` tells apart.
SETUP = (("loop", "callback cpu costs"), ("user", "random module seed"))


@dataclass(frozen=True)
class Point:
    """A schedule choice a run passed: its stream and reason, `options` (an order
    of that many steps, or a pick among that many) and the value taken."""

    stream: str
    reason: str
    order: bool  # an order of `options` ready steps (else a pick of one of them)
    options: int
    value: Value  # as a choice file writes it: "2,0,1", or an index

    def alternatives(self, budget: int) -> Iterator[tuple[Value, int]]:
        """Every other value this point may take for at most `budget` delays,
        with its cost, in a fixed order (cheapest first)."""
        if not self.order:
            for index in range(1, min(self.options, budget + 1)):
                yield index, index
            return
        for cost in range(1, budget + 1):
            for code in _codes(self.options, cost):
                yield ",".join(map(str, _from_code(code))), cost


def cost_of(point: Point) -> int:
    """The delays the value taken at `point` costs."""
    if point.value is None:
        return 0
    if not point.order:
        return int(point.value)
    order = [int(part) for part in str(point.value).split(",")]
    return sum(1 for i, a in enumerate(order) for b in order[i + 1 :] if a > b)


def _codes(n: int, total: int) -> Iterator[list[int]]:
    """Lehmer codes of permutations of n with digits summing to `total`
    (digit i at most n - 1 - i), in lexicographic order."""

    def build(i: int, left: int) -> Iterator[list[int]]:
        if i == n:
            if left == 0:
                yield []
            return
        for digit in range(min(n - 1 - i, left) + 1):
            for rest in build(i + 1, left - digit):
                yield [digit, *rest]

    return build(0, total)


def _from_code(code: list[int]) -> list[int]:
    pool = list(range(len(code)))
    return [pool.pop(digit) for digit in code]


class Enumerating(ChoiceSession):
    """One run's choices: `decisions` replayed, every other draw its default;
    the schedule points and other draws it met, in draw order."""

    def __init__(self, decisions: list[Choice]) -> None:
        super().__init__(decisions)
        self.points: list[Point] = []
        self.others: list[tuple[str, str]] = []  # draws that are no schedule choice

    def _new_stream(self, name: str, seed: int, trace: Trace) -> Stream:
        return _Stream(name, seed, trace, self)


class _Stream(ReplayingStream):
    """A replaying stream that tells its session what kind of draw each was."""

    __slots__ = ()

    def _other(self, reason: str) -> None:
        session = self._session
        assert isinstance(session, Enumerating)
        if (self.name, reason) not in SETUP:
            session.others.append((self.name, reason))

    def _point(self, reason: str, order: bool, options: int, value: Value) -> None:
        session = self._session
        assert isinstance(session, Enumerating)
        if self.name != SCHEDULE_STREAM or reason not in (ORDERS if order else PICKS):
            session.others.append((self.name, reason))
            return
        default = value == (",".join(map(str, range(options))) if order else 0)
        session.points.append(Point(self.name, reason, order, options, None if default else value))

    def below(self, n: int, reason: str) -> int:
        value = super().below(n, reason)
        if n > 1:
            self._point(reason, False, n, value)
        return value

    def permutation(self, n: int, reason: str) -> list[int]:
        order = super().permutation(n, reason)
        if n > 1:
            self._point(reason, True, n, ",".join(map(str, order)))
        return order

    def raw(self, k: int, reason: str = "raw bits") -> int:
        self._other(reason)
        return super().raw(k, reason)

    def random(self, reason: str) -> float:
        self._other(reason)
        return super().random(reason)

    def uniform(self, low: float, high: float, reason: str) -> float:
        self._other(reason)
        return super().uniform(low, high, reason)

    def chance(self, probability: float, reason: str) -> bool:
        if 0.0 < probability < 1.0:
            self._other(reason)
        return super().chance(probability, reason)

    def exponential(self, mean: float, reason: str, quiet: float | None = None) -> float:
        self._other(reason)
        return super().exponential(mean, reason, quiet)

    def seed_for(self, reason: str) -> int:
        self._other(reason)
        return super().seed_for(reason)
