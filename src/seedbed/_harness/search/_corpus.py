"""The corpus's draws stay on disk; a search holds only a few entries' in memory.

An entry's choices are every draw of its run (thousands in a world of
nodes): holding each kept entry's would grow a long search by a copy of a
run per entry. So an entry holds only how to read them back, its choice
file and how its streams interleave (`order`, two integers per switch of
stream, in a flat array), and `StoredChoices` reads the file when a plan
first looks at the entry's draws. Plans look only at the entry they branch
from, and the search favours recent finds (`_plan.energy`), so the last
`CACHED` entries looked at (or just kept) stay in memory, least recently
used dropped first. The draws read back are the draws the run made: a
choice file keeps each value exactly, and `interleaved` restores the order.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from seedbed._core.choices import Choice

CACHED = 8  # entries whose draws stay in memory

Order = Sequence[Sequence[int]]  # [stream number, draws in a row] pairs
Loader = Callable[[int, Order], list[Choice]]  # (run index, order) -> its choices


class ChoiceCache:
    """The draws of the entries looked at last, read through `load` when missing."""

    def __init__(self, load: Loader, size: int = CACHED) -> None:
        self._load = load
        self._size = size
        self._held: OrderedDict[int, list[Choice]] = OrderedDict()

    def get(self, index: int, order: array[int]) -> list[Choice]:
        """Run `index`'s choices: from memory, or read from its file and kept
        (`order` flat: stream number, draws in a row, stream number, ...)."""
        held = self._held.get(index)
        if held is None:
            pairs = [(order[at], order[at + 1]) for at in range(0, len(order), 2)]
            held = self._load(index, pairs)
            self.put(index, held)
        else:
            self._held.move_to_end(index)
        return held

    def put(self, index: int, chosen: list[Choice]) -> None:
        """Keep run `index`'s choices (a run just kept: it is followed up next)."""
        self._held[index] = chosen
        self._held.move_to_end(index)
        while len(self._held) > self._size:
            self._held.popitem(last=False)

    def __len__(self) -> int:
        return len(self._held)


class StoredChoices(Sequence[Choice]):
    """A corpus entry's choices, read from its file (through the cache) when looked at."""

    __slots__ = ("_cache", "_index", "_order")

    def __init__(self, cache: ChoiceCache, index: int, order: Order) -> None:
        self._cache = cache
        self._index = index
        self._order = array("q", [number for pair in order for number in pair])

    def load(self) -> list[Choice]:
        """The choices, read from the file now if they are not in memory."""
        return self._cache.get(self._index, self._order)

    @overload
    def __getitem__(self, at: int) -> Choice: ...

    @overload
    def __getitem__(self, at: slice) -> Sequence[Choice]: ...

    def __getitem__(self, at: int | slice) -> Choice | Sequence[Choice]:
        return self.load()[at]

    def __len__(self) -> int:
        return len(self.load())

    def __iter__(self) -> Iterator[Choice]:
        return iter(self.load())
