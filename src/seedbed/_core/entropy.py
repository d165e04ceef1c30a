"""The entropy: every choice a run makes, drawn from one seed.

A run has one root seed. Subsystems (the scheduler, the network, each disk,
user code) draw from *streams* derived from the root by name, so a new draw in
one subsystem never shifts the values another one sees.

Every draw names its reason (`stream.below(3, "timer tie at 1.5s")`); the
trace records and hashes it, so a trace explains itself and two runs that
choose differently hash differently. A choice among a single option is forced:
it consumes no entropy and records nothing.

Portability: the raw bits come from MT19937 (`random.Random.getrandbits`)
seeded with an integer, which CPython has kept bit-identical across versions
and platforms. Everything built on them (bounded integers, floats, shuffles,
distributions) is computed here from those raw bits, never through
`randrange`/`shuffle`/`uniform`, whose internals have changed between
versions. A test pins the first draws of each distribution. Floats are
53 raw bits times 2**-53 (exact), then IEEE-754 arithmetic, the same on
every CPython; `exponential` also takes `math.log1p`, from the platform's C
library: one result per platform for every CPython version, though two C
libraries could differ in the last bit. Never `sum()` floats that feed a
draw: see `floats.ordered_sum`.
"""

from __future__ import annotations

import hashlib
import math
import random
import sys
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from seedbed._core.contract import broken, require
from seedbed._core.trace import MASK, Trace, word_of
from seedbed._core.validate import check_seed

_BIG_ENDIAN = sys.byteorder == "big"

# `Stream.order`'s pool: how many keys are drawn at once (the trace folds their first 64 bits).
POOL_KEYS = 256
_NO_KEYS = array("I")
if array("I").itemsize != 4:  # pragma: no cover - no such CPython platform known
    raise ImportError("seedbed's entropy needs 4-byte array('I') items")

if TYPE_CHECKING:
    from seedbed._core.choices import ChoiceSession

T = TypeVar("T")

# Set while choices are recorded or replayed (`seedbed._core.choices.session`);
# read only when a stream is created, so the draws of other runs cost nothing more.
choice_session: ChoiceSession | None = None

_DOUBLE_BITS = 53
_DOUBLE_SCALE = 1.0 / (1 << _DOUBLE_BITS)


def derive_seed(root: int, name: str) -> int:
    """A 128-bit seed for the stream `name`, independent of every other name."""
    text = f"seedbed/{root}/{name}".encode()
    seed = int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "big")
    require(0 <= seed < 1 << 128, "a stream's seed has 128 bits", seed=seed)
    return seed


class Stream:
    """One named sequence of labelled draws. Create through `Entropy.stream`.

    Its generator is made at its first draw, not with the stream: a world
    asks for a stream per disk, the network, the clocks, and a small system
    draws from few of them, while seeding an MT19937 costs about as much as
    a hundred draws (issue 30). The seed, and so every value, is the same.
    """

    __slots__ = (
        "_bits", "_keys", "_keys_at", "_name_word", "_plain", "_root", "_seed", "_trace", "name",
    )  # fmt: skip

    def __init__(self, name: str, seed: int | None, trace: Trace, root: int = 0) -> None:
        """`seed` None: derived from `root` and `name` at the first draw."""
        self.name = name
        self._name_word = word_of(name)
        self._seed = seed
        self._root = root
        self._trace = trace
        # Replaced by the generator's own `getrandbits` at the first draw, so the
        # hot path is a slot read and a C call, as before (a `__getattr__` hook
        # would slow every attribute read of the class).
        self._bits: Callable[[int], int] = _Unseeded(self)
        # This class's own draws, not a subclass's that replays them: `order` and
        # `swapped` may then take their keys from the pool.
        self._plain = type(self) is Stream
        self._keys = _NO_KEYS  # the pool `order` sorts by (see there), drawn when used
        self._keys_at = POOL_KEYS  # the next unused key: none yet

    def _note(self, reason: str, value: int | float | str) -> None:
        self._trace.draw(self._name_word, self.name, reason, value)

    def raw(self, k: int, reason: str = "raw bits") -> int:
        """k uniformly random bits, not traced: for callers that trace a summary.

        `reason` names the bits for choice recording (see `choices`)."""
        return self._bits(k)

    def trace_raw(self, reason: str, value: int) -> None:
        """Fold `value`, from bits `raw` drew, into the trace as this stream's draw
        (`emit("draw", name, reason, value)`'s word, by `Trace.draw`'s fast path).

        For callers that trace what they drew raw: not a choice of its own
        (recording streams record the `raw` call), so not `_note`."""
        self._trace.draw(self._name_word, self.name, reason, value)

    def below(self, n: int, reason: str) -> int:
        """A uniform integer in [0, n). With n == 1 the choice is forced."""
        if n <= 1:
            if n == 1:
                return 0
            raise ValueError(f"below() needs n >= 1, got {n}")
        k = (n - 1).bit_length()
        value = self._bits(k)
        while value >= n:  # rejection keeps it exactly uniform
            value = self._bits(k)
        if value < 0:
            broken("a bounded draw stays in [0, n)", n=n, value=value)
        self._note(reason, value)
        return value

    def between(self, low: int, high: int, reason: str) -> int:
        """A uniform integer in [low, high], both ends included."""
        if high < low:
            raise ValueError(f"between() needs low <= high, got {low} > {high}")
        return low + self.below(high - low + 1, reason)

    def random(self, reason: str) -> float:
        """A uniform float in [0.0, 1.0) with 53 random bits."""
        value = self._bits(_DOUBLE_BITS) * _DOUBLE_SCALE
        self._note(reason, value)
        return value

    def uniform(self, low: float, high: float, reason: str) -> float:
        """A uniform float in [low, high)."""
        value = low + (high - low) * self._bits(_DOUBLE_BITS) * _DOUBLE_SCALE
        self._note(reason, value)
        return value

    def chance(self, probability: float, reason: str) -> bool:
        """True with the given probability. 0 and 1 are forced and draw nothing."""
        if probability <= 0.0:
            return False
        if probability >= 1.0:
            return True
        value = self._bits(_DOUBLE_BITS) * _DOUBLE_SCALE < probability
        self._note(reason, int(value))
        return value

    def exponential(self, mean: float, reason: str, quiet: float | None = None) -> float:
        """An exponentially distributed float with the given mean (memoryless delays).

        `quiet` is the value a replay of recorded choices uses where it has
        none: by default the typical one (the median, `mean * ln 2`);
        `math.inf` for "never" (no more faults)."""
        u = self._bits(_DOUBLE_BITS) * _DOUBLE_SCALE
        value = -math.log1p(-u) * mean
        self._note(reason, value)
        return value

    def choice(self, options: Sequence[T], reason: str) -> T:
        """One of `options`, uniformly. A single option is forced."""
        if not options:
            raise ValueError(f"choice() from no options ({reason})")
        return options[self.below(len(options), reason)]

    def permutation(self, n: int, reason: str) -> list[int]:
        """A uniform permutation of range(n), recorded as one draw.

        Each index draws a 32-bit key from one `getrandbits` call and the
        indices are sorted by key (ties, about one in 2**33 per pair, keep
        index order): C-level work where a Python Fisher-Yates loop cost a
        few hundred instructions per index. (Task-order exploration draws its
        orders by `order`, from a pool of such keys.)
        """
        if n < 2:
            return list(range(n))
        if n == 2:  # the same two keys and order, no sort
            return self._pair(reason)
        if n == 3:  # the same keys and order, by three comparisons
            return self._triple(reason)
        keys = _keys_of(self._bits(32 * n), n)
        order = sorted(range(n), key=keys.__getitem__)
        if len(order) != n:
            broken("a permutation keeps every index", n=n, order=order)
        self._note(reason, order_text(order))
        return order

    def order(self, n: int, reason: str) -> list[int]:
        """A uniform order of range(n), its keys from the stream's pool: for draws
        made so often that tracing each one costs more than making it.

        Like `permutation`, the indices sorted by 32-bit keys (ties keep index
        order), but the keys come from a pool of `POOL_KEYS` drawn at once and
        folded into the trace as one draw, labelled `reason`, whose value is
        the pool's first 64 bits: a run's orders are its seed's pool and its
        batches' sizes. Task-order exploration draws an order for most batches
        of ready tasks, and a fold (64-bit multiplies on Python integers) cost
        more than the order itself (issue 50). A stream that replays choices
        (a subclass) draws its `permutation` instead, and one that records them
        records each order as a choice of its own.
        """
        if not self._plain:
            return self.permutation(n, reason)
        return self._pooled_order(n, reason)

    def swapped(self, reason: str) -> bool:
        """Whether `order(2, reason)` is [1, 0]: two tasks ready together, the
        order exploration draws most, without building the list."""
        if not self._plain:
            return self.order(2, reason)[0] == 1
        keys, at = self._keys, self._keys_at
        if at + 2 > POOL_KEYS:
            keys, at = self._draw_keys(reason), 0
        self._keys_at = at + 2
        return keys[at] > keys[at + 1]  # equal keys keep index order

    def _pooled_order(self, n: int, reason: str) -> list[int]:
        if n < 2:
            return list(range(n))
        if n > POOL_KEYS:
            raise ValueError(f"order() of at most {POOL_KEYS} items, got {n} ({reason})")
        keys, at = self._keys, self._keys_at
        if at + n > POOL_KEYS:
            keys, at = self._draw_keys(reason), 0
        self._keys_at = at + n
        if n == 2:
            return [1, 0] if keys[at] > keys[at + 1] else [0, 1]
        order = sorted(range(n), key=keys[at : at + n].__getitem__)
        if len(order) != n:
            broken("an order keeps every index", n=n, order=order)
        return order

    def _draw_keys(self, reason: str) -> array[int]:
        """A fresh pool of keys (what was left of the last is not used: an order's
        keys are consecutive), folded into the trace as one draw."""
        bits = self._bits(32 * POOL_KEYS)
        keys = _keys_of(bits, POOL_KEYS)
        self._trace.draw(self._name_word, self.name, reason, bits & MASK)
        self._keys = keys
        return keys

    def _pair(self, reason: str) -> list[int]:
        """`permutation(2, reason)`, worked out from the keys' bits: key 0 is the low
        32 bits of the draw, key 1 the high ones, and equal keys keep index order."""
        bits = self._bits(64)
        if bits & 0xFFFF_FFFF <= bits >> 32:
            self._note(reason, "0,1")
            return [0, 1]
        self._note(reason, "1,0")
        return [1, 0]

    def _triple(self, reason: str) -> list[int]:
        """`permutation(3, reason)` from the keys' bits (key i is bits 32i to 32i + 31
        of the draw; equal keys keep index order), without the array and the sort,
        which cost more than the draw's fold."""
        bits = self._bits(96)
        first, second, third = bits & 0xFFFF_FFFF, bits >> 32 & 0xFFFF_FFFF, bits >> 64
        if first <= second:
            if second <= third:
                order, text = [0, 1, 2], "0,1,2"
            elif first <= third:
                order, text = [0, 2, 1], "0,2,1"
            else:
                order, text = [2, 0, 1], "2,0,1"
        elif first <= third:
            order, text = [1, 0, 2], "1,0,2"
        elif second <= third:
            order, text = [1, 2, 0], "1,2,0"
        else:
            order, text = [2, 1, 0], "2,1,0"
        self._note(reason, text)
        return order

    def shuffled(self, items: Sequence[T], reason: str) -> list[T]:
        """A uniformly shuffled copy of `items`."""
        return [items[i] for i in self.permutation(len(items), reason)]

    def seed_for(self, reason: str) -> int:
        """A fresh 64-bit seed, e.g. for a `random.Random` handed to user code."""
        value = self._bits(64)
        self._note(reason, value)
        return value


def _keys_of(bits: int, n: int) -> array[int]:
    """`n` 32-bit keys from `bits`, key i being bits 32i to 32i + 31, the same on
    every machine: what `permutation` and `order` sort by."""
    keys = array("I", bits.to_bytes(4 * n, "little"))
    if _BIG_ENDIAN:
        keys.byteswap()
    return keys


# An order's trace value ("2,0,1") by the order: batches of a few tasks repeat a
# few orders, and the text cost a third of a small permutation. Bounded: orders
# of many steps come in too many kinds to keep for a sweep worker's life.
_ORDER_TEXTS: dict[tuple[int, ...], str] = {}
_KEPT_ORDERS = 20_000


def order_text(order: list[int]) -> str:
    """`",".join(map(str, order))`, kept for the orders seen most."""
    key = tuple(order)
    text = _ORDER_TEXTS.get(key)
    if text is None:
        text = ",".join(map(str, order))
        if len(_ORDER_TEXTS) < _KEPT_ORDERS:
            _ORDER_TEXTS[key] = text
    return text


class _Unseeded:
    """A stream's bits before its first draw: seeds the generator, then steps aside."""

    __slots__ = ("_stream",)

    def __init__(self, stream: Stream) -> None:
        self._stream = stream

    def __call__(self, k: int) -> int:
        stream = self._stream
        if isinstance(stream._bits, _Unseeded):  # else a caller kept this object: delegate
            seed = stream._seed
            if seed is None:
                seed = stream._seed = derive_seed(stream._root, stream.name)
            stream._bits = random.Random(seed).getrandbits
        return stream._bits(k)


class Entropy:
    """The root of a run's randomness: a seed and the streams derived from it."""

    __slots__ = ("_streams", "_trace", "seed")

    def __init__(self, seed: int, trace: Trace) -> None:
        self.seed = check_seed(seed)
        self._trace = trace
        self._streams: dict[str, Stream] = {}

    def stream(self, name: str) -> Stream:
        """The stream called `name`; the same object every time it is asked for."""
        stream = self._streams.get(name)
        if stream is None:
            require(name not in self._streams, "an entropy stream is derived once per name")
            if choice_session is None:  # its seed is derived at its first draw
                stream = Stream(name, None, self._trace, self.seed)
            else:
                seed = derive_seed(self.seed, name)
                stream = choice_session.stream(self, name, seed, self._trace)
            self._streams[name] = stream
        elif stream.name != name:
            broken("a name always gives its own stream", asked=name, got=stream.name)
        return stream
