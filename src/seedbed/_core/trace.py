"""The trace: what happened in a run, folded into a running hash as it happens.

Events are short tuples `(kind, field, ...)` of strings, ints and floats:
`("time", 1500000000, 212)` when virtual time jumps to a timer (at step 212),
`("draw", stream, reason, value)` for every entropy draw, `("task", number,
name)` when a task starts, `("deliver", sender, receiver, size, crc)` when
bytes reach a receiver. The hash is an FNV-style fold of 64-bit words;
strings fold through a blake2b digest, so the hash never depends on
`PYTHONHASHSEED`.

An equal hash is an equal run, so the hash covers where each event happened
and how the run ended, not only what happened:

- Position. A trace bound to a loop (`bind`) folds an `("at", step, time_ns)`
  marker before any event whose step or virtual time differs from the last
  event's: two runs that make the same draws at different steps (one more
  callback in one CPython's `wait_for`) hash differently, at the cost of one
  comparison per event that stays where the last one was.
- Payloads. Every delivery folds its size and a CRC-32 of its bytes: a digest,
  never a copy, so a run whose C code drew its own entropy (a TLS key share)
  shows it in the hash.
- The ending. `seal` folds the step count, the end time and a digest of the
  outcome (the returned value, or the failure's identity) once, at the end.

A trace can also keep its events (to write them out) or check each one
against a recorded list, raising `Nondeterminism` at the first that differs.
Inside a `recording()` block every new trace keeps its events: how the
harness records a run whose trace it cannot pass in.

Notes: while a trace file is being written, `notes` is the writer's `note`
method, and the simulator passes it what a viewer needs and the hash must not
see (which segment a delivered chunk belongs to, a datagram's identity). A
note is never folded into the hash nor counted as an event, and replay skips
it; with no file recorded `notes` is None and a call site costs one test.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from seedbed._core.clock import VirtualClock
from seedbed._core.contract import require
from seedbed.errors import Nondeterminism

Field = str | int | float
Event = tuple[Field, ...]

MASK = (1 << 64) - 1
PRIME = 0x100000001B3
_OFFSET = 0xCBF29CE484222325
_STRING_TAG = 0x5EED_0001
_FLOAT_TAG = 0x5EED_0002
_BIG_TAG = 0x5EED_0003

_string_words: dict[str, int] = {}


# How many strings' words are kept: the labels and names a run repeats are a
# few hundred, but drawn values ("3,0,2,1" orders) come in too many kinds to
# keep for a sweep worker's life. Past this, new strings are hashed each time.
_KEPT_WORDS = 50_000


def _string_word(text: str) -> int:
    word = _string_words.get(text)
    if word is None:
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        word = int.from_bytes(digest, "little")
        if len(_string_words) < _KEPT_WORDS:
            _string_words[text] = word
    return word


_pack_float = struct.Struct("<d").pack
_unpack_word = struct.Struct("<Q").unpack


def _word(field: Field) -> int:
    if isinstance(field, str):
        return _string_word(field) ^ _STRING_TAG
    if isinstance(field, float):
        return _unpack_word(_pack_float(field))[0] ^ _FLOAT_TAG  # type: ignore[no-any-return]
    if 0 <= field <= MASK:
        return field
    return _string_word(repr(field)) ^ _BIG_TAG


_DRAW_WORD = _string_word("draw") ^ _STRING_TAG
_AT_WORD = _string_word("at") ^ _STRING_TAG
_DELIVER_WORD = _string_word("deliver") ^ _STRING_TAG
_SEAL_WORD = _string_word("seal") ^ _STRING_TAG
_crc32 = zlib.crc32


class Position(Protocol):
    """Where a run is: what a trace reads to place its events (a loop's state)."""

    @property
    def steps(self) -> int: ...

    @property
    def clock(self) -> VirtualClock: ...


def word_of(field: Field) -> int:
    """The word a field folds into the hash (for callers that fold it repeatedly)."""
    return _word(field)


def describe_event(event: Sequence[Field]) -> str:
    """A one-line rendering for error messages."""
    if len(event) == 3 and event[0] == "at" and isinstance(event[2], int):
        return f"at step {event[1]}, t={event[2] / 1e9:.9f}s"
    return " ".join(str(field) for field in event)


def route_word(sender: str, receiver: str) -> int:
    """The word a delivery from `sender` to `receiver` folds beside its digest
    (see `Trace.deliver`): kept by the caller, once per connection."""
    return (_string_word(sender) * 3 ^ _string_word(receiver) ^ _DELIVER_WORD) & MASK


# The open `recording()` blocks, innermost last, each with the traces made in
# it and what keeps their events (None: a list).
_recordings: list[list[Trace]] = []
_keepers: list[Callable[[], Any] | None] = []


@contextmanager
def recording(keeper: Callable[[], Any] | None = None) -> Iterator[list[Trace]]:
    """Every `Trace` made inside the block keeps its events; the list yielded
    holds them in the order they were made.

    For runs the harness does not build itself (a function f(seed) that makes
    its own `Simulation`): it cannot pass such a run a trace, so it records
    what the run's loop traces. `keeper()` makes what each trace appends its
    events to instead of a list (a failure report keeps the tail and a few
    kinds). Keeping events changes no hash.
    """
    made: list[Trace] = []
    _recordings.append(made)
    _keepers.append(keeper)
    try:
        yield made
    finally:
        _recordings.pop()
        _keepers.pop()


class Trace:
    """A running hash of events, optionally keeping or checking them."""

    __slots__ = (
        "_expected", "at", "count", "divergence", "events", "notes", "now", "on_divergence",
        "quiet", "sealed", "step", "word",
    )  # fmt: skip

    def __init__(self, *, keep: bool = False, expected: Sequence[Event] | None = None) -> None:
        if _recordings:
            keep = True
            _recordings[-1].append(self)
        self.word = _OFFSET
        self.count = 0
        self.events: list[Event] | None = [] if keep else None
        if keep and _recordings and _keepers[-1] is not None:
            self.events = _keepers[-1]()
        self._expected = expected
        # Neither keeping nor checking events: only the hash is maintained, and
        # the loop may fold time events inline (see `time`).
        self.quiet = not keep and expected is None
        # The first divergence found, kept in case user code swallows the raise.
        self.divergence: Nondeterminism | None = None
        # Told of the first divergence (the loop ends the run there: every
        # later event would diverge again, each in some task nobody awaits).
        self.on_divergence: Callable[[Nondeterminism], None] | None = None
        # Where annotations go (a trace file's writer), or None: see the module doc.
        self.notes: Callable[..., None] | None = None
        # The run's position (a loop's state, see `bind`) and the last one folded.
        self.at: Position | None = None
        self.step = 0
        self.now = 0
        self.sealed = False

    def bind(self, at: Position) -> None:
        """Place every later event at `at`'s step and virtual time (see the module doc)."""
        self.at = at
        self.step = at.steps
        self.now = at.clock.now

    def _move(self, step: int, now: int) -> None:
        """The run moved since the last event: fold an `("at", step, now)` marker.

        One word: the time, the step shifted over it and a tag (so a marker
        never folds as a time jump), mixed by one multiply, the dear part of a
        fold. `draw` and `deliver` repeat this fold inline: they must agree.
        """
        self.step = step
        self.now = now
        self.word = ((self.word ^ now ^ step << 24 ^ _AT_WORD) * PRIME) & MASK
        if self.quiet:
            self.count += 1
        else:
            self._after(("at", step, now))

    def emit(self, *event: Field) -> None:
        """Fold one event into the hash (and keep or check it)."""
        at = self.at
        if at is not None and (at.steps != self.step or at.clock.now != self.now):
            self._move(at.steps, at.clock.now)
        h = self.word
        for field in event:
            h = ((h ^ _word(field)) * PRIME) & MASK
        self.word = h
        self._after(event)

    def draw(self, stream_word: int, stream: str, reason: str, value: int | float | str) -> None:
        """An entropy draw: the same as `emit("draw", stream, reason, value)`, faster.

        `stream_word` is `word_of(stream)`, computed once by the stream.
        """
        h = self.word
        at = self.at
        if at is not None:
            step = at.steps
            now = at.clock.now
            if step != self.step or now != self.now:
                if not self.quiet:
                    self._move(step, now)
                    h = self.word
                else:  # `_move`, inlined
                    h = ((h ^ now ^ step << 24 ^ _AT_WORD) * PRIME) & MASK
                    self.step = step
                    self.now = now
                    self.count += 1
        reason_word = _string_words.get(reason)  # `_string_word`, inlined for the usual hit
        if reason_word is None:
            reason_word = _string_word(reason)
        # Three folds with one mask at the end: a word (below 2**64) changes only the
        # low 64 bits it is xored into, and what lies above them, times PRIME, stays
        # above them, so masking last gives the same word for fewer operations.
        h = ((h ^ _DRAW_WORD) * PRIME ^ stream_word) * PRIME ^ reason_word ^ _STRING_TAG
        h = (h * PRIME) & MASK
        if type(value) is float:  # most draws: `_word`'s float case, inlined
            value_word = _unpack_word(_pack_float(value))[0] ^ _FLOAT_TAG
        elif type(value) is str:  # an order ("1,0"): `_word`'s string case, inlined
            value_word = _string_words.get(value)
            if value_word is None:
                value_word = _string_word(value)
            value_word ^= _STRING_TAG
        else:
            value_word = _word(value)
        self.word = ((h ^ value_word) * PRIME) & MASK
        if self.quiet:
            self.count += 1
        else:
            self._after(("draw", stream, reason, value))

    def time(self, now_ns: int, steps: int) -> None:
        """Virtual time jumped to `now_ns` after `steps` callbacks (the most
        frequent event): it places the events after it, so no marker follows.

        Folded as one word with no kind tag (the time, the step shifted over
        it). The loop repeats this fold inline when `quiet`; the two must stay
        identical.
        """
        self.word = ((self.word ^ now_ns ^ steps << 24) * PRIME) & MASK
        self.now = now_ns
        self.step = steps
        if self.quiet:
            self.count += 1
        else:
            self._after(("time", now_ns, steps))

    def deliver(self, route: int, sender: str, receiver: str, data: bytes) -> None:
        """Bytes reached `receiver`: the event `("deliver", sender, receiver, size,
        crc)`, folded as one word (and its position marker's, inline: one of
        each per message is the network's hot path).

        `route` is `route_word(sender, receiver)`, which the caller keeps.
        A marker and its delivery fold together, under one multiply: the
        digest goes in rotated by a byte, so neither can stand in for the other.
        """
        size = len(data)
        crc = _crc32(data)
        word = (crc << 8 | size << 40) ^ route
        at = self.at
        if at is not None:
            step = at.steps
            now = at.clock.now
            if step != self.step or now != self.now:
                self.step = step
                self.now = now
                word ^= now ^ step << 24 ^ _AT_WORD
                if self.quiet:
                    self.count += 1
                else:
                    self._after(("at", step, now))
        self.word = ((self.word ^ word) * PRIME) & MASK
        if self.quiet:
            self.count += 1
        else:
            self._after(("deliver", sender, receiver, size, crc))

    def seal(self, steps: int, now_ns: int, outcome: int) -> None:
        """Fold how the run ended: its step count, end time and outcome digest.

        `outcome` is a 64-bit digest of the value or the failure (the caller's:
        this layer knows no results). Not an event (a recorded trace's end line
        holds the same facts, which a replay compares); once per trace, so a
        hash read after it is final.
        """
        require(not self.sealed, "a trace is sealed once, when its run ends")
        self.sealed = True
        h = ((self.word ^ _SEAL_WORD) * PRIME) & MASK
        h = ((h ^ steps) * PRIME) & MASK
        h = ((h ^ now_ns) * PRIME) & MASK
        self.word = ((h ^ (outcome & MASK)) * PRIME) & MASK

    def _after(self, event: Event) -> None:
        index = self.count
        self.count = index + 1
        if self.events is not None:
            self.events.append(event)
        if self._expected is not None:
            self._check(index, event)

    def _check(self, index: int, event: Event) -> None:
        expected = self._expected
        require(expected is not None, "only a checking trace compares events")
        assert expected is not None  # for mypy: require does not narrow
        require(index == self.count - 1, "events are compared in the order they happen")
        if index < len(expected) and tuple(expected[index]) == event:
            return
        if self.divergence is not None:  # events after the first differ too: one error
            raise self.divergence
        recorded = describe_event(expected[index]) if index < len(expected) else "(end of trace)"
        divergence = Nondeterminism(
            f"the run diverged from the recorded trace at event {index}\n"
            f"  recorded: {recorded}\n  actual:   {describe_event(event)}"
        )
        self.divergence = divergence
        if self.on_divergence is not None:
            self.on_divergence(divergence)
        raise divergence

    def check_complete(self) -> None:
        """In checking mode, fail if the run ended before the recorded trace did."""
        expected = self._expected
        if expected is not None and self.count < len(expected):
            raise Nondeterminism(
                f"the run ended before the recorded trace did, at event {self.count}\n"
                f"  recorded: {describe_event(expected[self.count])}\n"
                f"  actual:   (end of run)"
            )

    @property
    def hash(self) -> str:
        """The hash of everything so far, as 16 hex digits."""
        require(0 <= self.word <= MASK, "the trace's hash stays one 64-bit word")
        return f"{self.word:016x}"
