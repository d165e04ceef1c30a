"""Choices: a run's labelled draws, recorded, and replayed leniently.

A *choice* is one labelled draw: the stream it came from, its reason and the
value it returned. Recording keeps every choice of a run in draw order;
replaying hands the recorded values back instead of drawing, so a shrinker
can edit them (`null` means "the quiet default") and a saved failure still
replays after small changes to the program.

Lenient replay lines choices up per stream *and* per reason: the k-th draw
with reason R in stream S gets the k-th recorded value for (S, R). So a
changed program that adds, removes or reorders draws of other reasons still
gets its own values. A draw whose reason has no value left takes the next
unused one of a reason that differs only in its numbers ("torn /log sector
4" for "sector 2"): a changed program, or a shrunk run whose file is shorter
at its crash, still gets the decision of the same kind that was recorded.
When the list has no value left for a draw, or the value
is `null`, the draw gets its default: the typical outcome of its
distribution, never an extreme branch (the median of a delay or a range, the
more likely side of a chance, so no loss and no fault; the first option; the
identity order, FIFO; raw bits whose every 32-bit lane is the middle value,
so a batch of latencies is a batch of median hops, not of the minimum, which
the heavy-tailed model reads as its spike). A default is logged as `null`:
a shrunk run's list says which draws still deviate from typical. A value
out of range wraps (modulo). A value of the wrong type
(a string where a number is drawn, a number where bits or an order are) is
not something seedbed writes: the draw takes its default, and the session
keeps it in `misfits` so the replay refuses the file, naming the stream.

A *setting* is a choice that is not drawn: a length the run would otherwise
take as given, which a shrinker may cut (a scenario's fault phase, see
`setting`). Outside a session it is the given value and leaves no trace.

Cost: only streams created while a `ChoiceSession` is active are of these
subclasses; every other run uses the plain `Stream`, whose draws are not
touched (`Entropy.stream` consults the session only when it creates a stream).
"""

from __future__ import annotations

import functools
import math
import re
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from seedbed._core import entropy
from seedbed._core.contract import broken, require
from seedbed._core.entropy import Stream

if TYPE_CHECKING:
    from seedbed._core.entropy import Entropy
    from seedbed._core.trace import Trace

Value = int | float | str | None
_T = TypeVar("_T")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+")  # not a node's name's digits: n2


class _Recorded:
    """A recorded value, queued under its reason and its reason's kind."""

    __slots__ = ("used", "value")

    def __init__(self, value: Value) -> None:
        self.value = value
        self.used = False


@functools.lru_cache(maxsize=4096)
def _kind(reason: str) -> str:
    """The reason with its numbers masked. Cached: a run repeats a few reasons
    thousands of times, and a branch or replay masks every one it replays."""
    return _NUMBER.sub("#", reason)


def _next(queue: deque[_Recorded] | None) -> _Recorded | None:
    while queue:
        entry = queue.popleft()
        if not entry.used:
            return entry
    return None


@dataclass(frozen=True)
class Choice:
    """One draw: its stream, reason, value (None: the quiet default) and place
    in the run's draw order (across streams)."""

    stream: str
    reason: str
    value: Value
    order: int


class ChoiceSession:
    """Streams created while active record their draws (and, given `source`,
    replay it). A session spans one run; a stream name asked for again by
    another `Entropy` (a failure report re-running the seed for its last
    events) starts a new pass, which replays from the start again and whose
    record is kept apart: `choices` is the first pass's."""

    def __init__(self, source: Sequence[Choice] | None = None) -> None:
        self._source = list(source) if source is not None else None
        self._owners: dict[str, Entropy] = {}
        self._queues: dict[tuple[str, str], deque[_Recorded]] = {}
        self._kinds: dict[tuple[str, str], deque[_Recorded]] = {}
        self._passes: list[list[Choice]] = [[]]
        self._opened: dict[str, None] = {}  # every stream name asked for, in any pass
        # (stream, reason, value, what the draw takes): the first few of the file's
        # values whose type no draw of theirs could use.
        self.misfits: list[tuple[str, str, Value, str]] = []
        self.phase_ended: float | None = None  # when a scenario's fault phase ended (s)
        self._reset_queues()

    @property
    def replaying(self) -> bool:
        return self._source is not None

    @property
    def choices(self) -> list[Choice]:
        """The draws of the first pass, in order: what the run chose."""
        return self._passes[0]

    def _reset_queues(self) -> None:
        self._queues, self._kinds = {}, {}
        for choice in sorted(self._source or (), key=lambda c: c.order):
            entry = _Recorded(choice.value)
            self._queues.setdefault((choice.stream, choice.reason), deque()).append(entry)
            self._kinds.setdefault((choice.stream, _kind(choice.reason)), deque()).append(entry)

    def stream(self, owner: Entropy, name: str, seed: int, trace: Trace) -> Stream:
        """A stream for `owner` that records (and replays) its draws."""
        previous = self._owners.get(name)
        if previous is not None and previous is not owner:
            self._owners = {}
            self._passes.append([])
            self._reset_queues()
        self._owners[name] = owner
        self._opened[name] = None
        return self._new_stream(name, seed, trace)

    def _new_stream(self, name: str, seed: int, trace: Trace) -> Stream:
        if self.replaying:
            return ReplayingStream(name, seed, trace, self)
        return RecordingStream(name, seed, trace, self)

    def unopened(self) -> list[str]:
        """The replayed streams the run never asked for, sorted: a choice file
        naming one is damaged or from another program, not a quiet default."""
        names = {choice.stream for choice in self._source or ()}
        return sorted(name for name in names if name not in self._opened)

    def misfit(self, stream: str, reason: str, value: Value, wanted: str) -> None:
        """Note a replayed value of the wrong type for its draw (see the module doc)."""
        entry = (stream, reason, value, wanted)
        if len(self.misfits) < 5 and entry not in self.misfits:
            self.misfits.append(entry)

    def log(self, stream: str, reason: str, value: Value) -> None:
        record = self._passes[-1]
        if record and record[-1].order != len(record) - 1:
            broken("recorded choices are numbered by position", last=record[-1].order)
        record.append(Choice(stream, reason, value, len(record)))

    def setting(self, stream: str, reason: str, given: float) -> float:
        """`given`, or (replaying) the recorded value in [0, given]; logged,
        as None while it is `given` (the quiet default: nothing cut)."""
        value = given
        if self.replaying:
            given_value = self.recorded(stream, reason)
            recorded = _as_float(given_value)
            if recorded is not None:
                value = min(max(recorded, 0.0), given)
            elif given_value is not None:
                self.misfit(stream, reason, given_value, "a number")
        self.log(stream, reason, None if value == given else value)
        return value

    def has_recorded(self, stream: str, reason: str) -> bool:
        """Whether `recorded` would find a value for (stream, reason) or its kind."""
        for queue in (self._queues.get((stream, reason)), self._kinds.get((stream, _kind(reason)))):
            while queue and queue[0].used:
                queue.popleft()  # a used entry is never handed out again
            if queue:
                return True
        return False

    def recorded(self, stream: str, reason: str) -> Value:
        """The next recorded value for (stream, reason), else for its kind
        (numbers aside), else None (the default)."""
        self._opened[stream] = None  # a setting's stream is asked here, never opened
        entry = _next(self._queues.get((stream, reason)))
        if entry is None:
            entry = _next(self._kinds.get((stream, _kind(reason))))
        if entry is None:
            return None
        require(not entry.used, "a recorded choice is replayed once", stream=stream)
        entry.used = True
        return entry.value


@contextmanager
def session(source: Sequence[Choice] | None = None) -> Iterator[ChoiceSession]:
    """Record (and with `source`, replay) the choices of runs made inside."""
    made = ChoiceSession(source)
    previous = entropy.choice_session
    entropy.choice_session = made
    try:
        yield made
    finally:
        entropy.choice_session = previous


def setting(stream: str, reason: str, given: float) -> float:
    """A length the run takes as `given` unless a replayed choice list cuts it
    (to a value in [0, given]): how a shrinker shortens what no draw decides.
    Outside a choice session: `given`, untouched, with nothing recorded."""
    made = entropy.choice_session
    return given if made is None else made.setting(stream, reason, given)


def draws_so_far() -> int:
    """How many draws the recorded run has made so far (0 outside a session):
    where a coverage point was reached, for a search to branch from there."""
    made = entropy.choice_session
    return 0 if made is None else len(made._passes[-1])


def phase_ended(seconds: float) -> None:
    """Note when a scenario's fault phase ended (virtual seconds), for a
    shrinker: cutting the phase only helps a failure found after it."""
    made = entropy.choice_session
    if made is not None and made.phase_ended is None:
        made.phase_ended = seconds


class RecordingStream(Stream):
    """A stream that draws as usual and logs every labelled draw."""

    __slots__ = ("_session",)

    def __init__(self, name: str, seed: int, trace: Trace, owner: ChoiceSession) -> None:
        super().__init__(name, seed, trace)
        self._session = owner

    def _note(self, reason: str, value: int | float | str) -> None:
        super()._note(reason, value)
        self._session.log(self.name, reason, value)

    def raw(self, k: int, reason: str = "raw bits") -> int:
        value = self._bits(k)
        self._session.log(self.name, reason, hex(value))
        return value

    def order(self, n: int, reason: str) -> list[int]:
        """The plain stream's pooled order (recording changes nothing a run
        draws), recorded as a choice of its own, as `permutation` is."""
        order = self._pooled_order(n, reason)
        if n >= 2:
            self._session.log(self.name, reason, entropy.order_text(order))
        return order


def _as_int(value: Value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


def _as_float(value: Value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


class ReplayingStream(Stream):
    """A stream that returns recorded values (or quiet defaults) and draws nothing.

    Each draw still goes to the trace (the run explains itself) and to the
    session's log, so a shrinker learns exactly what the run used.
    """

    __slots__ = ("_session",)

    def __init__(self, name: str, seed: int, trace: Trace, owner: ChoiceSession) -> None:
        super().__init__(name, seed, trace)
        self._session = owner

    def _take(self, reason: str) -> Value:
        return self._session.recorded(self.name, reason)

    def _int(self, reason: str) -> int | None:
        return self._fits(reason, _as_int, "an integer")

    def _float(self, reason: str) -> float | None:
        return self._fits(reason, _as_float, "a number")

    def _fits(self, reason: str, convert: Callable[[Value], _T | None], wanted: str) -> _T | None:
        """The recorded value as `convert` makes it, or None (the default): a
        value it cannot use is a misfit, noted for the replay to refuse."""
        recorded = self._take(reason)
        value = convert(recorded)
        if value is None and recorded is not None:
            self._session.misfit(self.name, reason, recorded, wanted)
        return value

    def _use(self, reason: str, value: int | float | str) -> None:
        Stream._note(self, reason, value)
        self._session.log(self.name, reason, value)

    def _use_default(self, reason: str, value: int | float | str) -> None:
        """A draw that took its typical default: traced as drawn, logged as None."""
        Stream._note(self, reason, value)
        self._session.log(self.name, reason, None)

    def raw(self, k: int, reason: str = "raw bits") -> int:
        recorded = self._fits(reason, _as_bits, "bits written as 0x... hex")
        if recorded is None:
            self._session.log(self.name, reason, None)
            return typical_bits(k)
        value = recorded & ((1 << k) - 1)
        self._session.log(self.name, reason, hex(value))
        return value

    def below(self, n: int, reason: str) -> int:
        if n <= 1:
            return super().below(n, reason)
        recorded = self._int(reason)
        if recorded is None:
            self._use_default(reason, 0)  # the first option
            return 0
        value = recorded % n
        require(0 <= value < n, "a replayed bounded draw stays in [0, n)", n=n, value=value)
        self._use(reason, value)
        return value

    def random(self, reason: str) -> float:
        recorded = self._float(reason)
        if recorded is None:
            self._use_default(reason, 0.5)  # the median
            return 0.5
        value = recorded % 1.0
        self._use(reason, value)
        return value

    def uniform(self, low: float, high: float, reason: str) -> float:
        recorded = self._float(reason)
        if recorded is None:
            middle = low + (high - low) / 2  # the median
            self._use_default(reason, middle)
            return middle
        value = low
        if high > low:
            value = low + (recorded - low) % (high - low)
        self._use(reason, value)
        return value

    def chance(self, probability: float, reason: str) -> bool:
        if probability <= 0.0 or probability >= 1.0:
            return super().chance(probability, reason)
        recorded = self._int(reason)
        if recorded is None:
            likely = int(probability > 0.5)  # the more likely side: no loss, no fault
            self._use_default(reason, likely)
            return bool(likely)
        value = recorded % 2
        self._use(reason, value)
        return bool(value)

    def exponential(self, mean: float, reason: str, quiet: float | None = None) -> float:
        recorded = self._float(reason)
        if recorded is None:
            value = mean * math.log(2) if quiet is None else quiet  # the median, or "never"
            if math.isinf(value):
                self._session.log(self.name, reason, None)  # the quiet "never"
            else:
                self._use_default(reason, value)
            return value
        value = abs(recorded)
        self._use(reason, value)
        return value

    def permutation(self, n: int, reason: str) -> list[int]:
        if n <= 1:
            return list(range(n))
        recorded = self._take(reason)
        order = _order_from(recorded, n)
        if recorded is not None and not _is_order(recorded):
            self._session.misfit(self.name, reason, recorded, "an order written as 2,0,1")
        if recorded is None:
            self._use_default(reason, ",".join(map(str, order)))  # FIFO
        else:
            self._use(reason, ",".join(map(str, order)))
        return order

    def seed_for(self, reason: str) -> int:
        recorded = self._int(reason)
        if recorded is None:
            self._use_default(reason, 0)
            return 0
        value = recorded % (1 << 64)
        self._use(reason, value)
        return value


_MIDDLE_LANE = 1 << 31  # a 32-bit lane's middle value: u = 0.5


def typical_bits(k: int) -> int:
    """`k` raw bits whose every 32-bit lane is its middle value: read as uniform
    draws (as a latency batch reads them, 32 or 64 bits a hop) each is 0.5, the
    median, so every hop is a median hop and none is a tail spike. Fewer than
    32 bits are one lane of their own width, its middle value."""
    if k <= 32:
        return 1 << (k - 1) if k > 0 else 0
    lanes = -(-k // 32)
    value = sum(_MIDDLE_LANE << (32 * lane) for lane in range(lanes))
    return value & ((1 << k) - 1)


def _as_bits(value: Value) -> int | None:
    if not isinstance(value, str) or not value.startswith("0x"):
        return None
    try:
        return int(value, 16)
    except ValueError:
        return None


def _is_order(value: Value) -> bool:
    """Whether `value` is an order as seedbed writes one: integers joined by commas."""
    return isinstance(value, str) and all(
        part.strip().isascii() and part.strip().isdigit() for part in value.split(",")
    )


def _order_from(recorded: Value, n: int) -> list[int]:
    """A permutation of range(n) from a recorded one: its entries below n in
    their order, then the missing ones ascending (identity when unusable)."""
    if not isinstance(recorded, str):
        return list(range(n))
    try:
        numbers = [int(part) for part in recorded.split(",")]
    except ValueError:
        return list(range(n))
    seen: dict[int, None] = {}
    for number in numbers:
        if 0 <= number < n:
            seen.setdefault(number)
    order = [*seen, *(i for i in range(n) if i not in seen)]
    require(sorted(order) == list(range(n)), "a replayed order is a permutation", n=n)
    return order


def by_stream(choices: Sequence[Choice]) -> dict[str, list[list[Value]]]:
    """Choices as a file holds them: per stream (first-draw order), [reason, value] pairs."""
    streams: dict[str, list[list[Value]]] = {}
    for choice in sorted(choices, key=lambda c: c.order):
        streams.setdefault(choice.stream, []).append([choice.reason, choice.value])
    return streams


def from_streams(streams: Mapping[str, Sequence[Sequence[Value]]]) -> list[Choice]:
    """Choices from a file's per-stream lists (the order across streams is
    not stored: streams follow one another, which replay does not depend on)."""
    choices: list[Choice] = []
    for name, pairs in streams.items():
        for reason, value in pairs:
            choices.append(Choice(name, str(reason), value, len(choices)))
    return choices
