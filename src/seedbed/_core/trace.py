"""The trace: what happened in a run, folded into a running hash as it happens.

Events are short tuples `(kind, field, ...)` of strings, ints and floats:
`("time", 1500000000)` when virtual time jumps to a timer, `("draw", stream,
reason, value)` for every entropy draw, `("task", number, name)` when a task
starts. The hash is an FNV-style fold of 64-bit words; strings fold through a
blake2b digest, so the hash never depends on `PYTHONHASHSEED`.

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

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


def word_of(field: Field) -> int:
    """The word a field folds into the hash (for callers that fold it repeatedly)."""
    return _word(field)


def describe_event(event: Sequence[Field]) -> str:
    """A one-line rendering for error messages."""
    return " ".join(str(field) for field in event)


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
        "_expected", "count", "divergence", "events", "notes", "on_divergence", "quiet", "word",
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

    def emit(self, *event: Field) -> None:
        """Fold one event into the hash (and keep or check it)."""
        h = self.word
        for field in event:
            h = ((h ^ _word(field)) * PRIME) & MASK
        self.word = h
        self._after(event)

    def draw(self, stream_word: int, stream: str, reason: str, value: int | float | str) -> None:
        """An entropy draw: the same as `emit("draw", stream, reason, value)`, faster.

        `stream_word` is `word_of(stream)`, computed once by the stream.
        """
        h = ((self.word ^ _DRAW_WORD) * PRIME) & MASK
        h = ((h ^ stream_word) * PRIME) & MASK
        reason_word = _string_words.get(reason)  # `_string_word`, inlined for the usual hit
        if reason_word is None:
            reason_word = _string_word(reason)
        h = ((h ^ reason_word ^ _STRING_TAG) * PRIME) & MASK
        if type(value) is float:  # most draws: `_word`'s float case, inlined
            value_word = _unpack_word(_pack_float(value))[0] ^ _FLOAT_TAG
        else:
            value_word = _word(value)
        self.word = ((h ^ value_word) * PRIME) & MASK
        if self.quiet:
            self.count += 1
        else:
            self._after(("draw", stream, reason, value))

    def time(self, now_ns: int) -> None:
        """Virtual time jumped to `now_ns` (the most frequent event).

        Folded as one word with no kind tag. The loop repeats this fold inline
        when `quiet`; the two must stay identical.
        """
        self.word = ((self.word ^ now_ns) * PRIME) & MASK
        if self.quiet:
            self.count += 1
        else:
            self._after(("time", now_ns))

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
