"""Branching: replay a recorded run's first choices, then draw afresh.

A coverage-guided search (`seedbed explore`) keeps runs that reached
something new and explores onward from them. A *branch* of a recorded run
replays its first `prefix` draws (counted in the run's draw order, across
streams) and then draws fresh values from its own seed, so it starts in the
state the recorded run had reached and then goes somewhere else.

A branch may also *redraw* whole streams from the start while replaying the
others: the fault streams, say, so the run's own decisions stay as they were
(lenient replay hands them out in the same order) while its faults move.

A branch may *strike*: replay every stream, and the first redrawn stream's
waits (exponential draws: the nemesis's "time to next fault") as recorded
until one would carry past virtual time `strike`; that wait is cut to end
at `strike`, and the stream draws afresh from then on. So the recorded run
gets one more fault at the moment it reached a rare state ("adding a fault
after the prefix"), and everything before is as it was.

Inside the prefix a draw takes its recorded value the way lenient replay
does (per stream and reason, then per reason's kind); a draw with no
recorded value left is drawn fresh rather than given its quiet default,
since a branch wants pressure, not silence. Every draw, replayed or fresh,
is logged, so the branch's own choice list replays it exactly with
`seedbed run TARGET --choices FILE`.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from seedbed._core.choices import Choice, ChoiceSession, ReplayingStream
from seedbed._core.entropy import _DOUBLE_BITS, _DOUBLE_SCALE, Stream

if TYPE_CHECKING:
    from seedbed._core.trace import Trace


class BranchSession(ChoiceSession):
    """A choice session whose streams replay `source` for the first `prefix`
    draws of the run, then draw afresh (`source` may be edited: a mutation).
    The streams named in `redraw` draw afresh from the start: "the same run,
    other faults" when they are the fault streams, and `hotter` > 1 draws
    their waits shorter (more faults, say, in the state the run reached)."""

    def __init__(
        self,
        source: Sequence[Choice],
        prefix: int,
        redraw: Sequence[str] = (),
        hotter: float = 1.0,
        strike: float | None = None,
    ) -> None:
        super().__init__(source)
        self.prefix = max(0, prefix)
        self.redraw = tuple(redraw)  # a handful of names: a tuple's scan is enough
        self.hotter = hotter  # redrawn streams' waits (exponentials) divided by this
        self.strike = strike  # virtual seconds: the redrawn stream replays until then
        self.struck = strike is None

    def _striking(self, stream: str) -> bool:
        """Whether `stream` still replays towards a strike (see the module doc)."""
        return not self.struck and stream == self.redraw[0]

    def _new_stream(self, name: str, seed: int, trace: Trace) -> Stream:
        return BranchingStream(name, seed, trace, self)

    def fresh(self, stream: str, reason: str) -> bool:
        """Whether this draw is fresh: past the prefix, or nothing recorded for it."""
        if len(self._passes[-1]) >= self.prefix:
            return True
        if stream in self.redraw and not self._striking(stream):
            return True
        return not self.has_recorded(stream, reason)

    def cut(self, stream: str, wait: float) -> float:
        """A replayed wait of `stream`, cut to end at the strike if it carries past it.

        The time read is the simulation's own (the running loop's virtual clock)."""
        if not self._striking(stream):
            return wait
        now = asyncio.get_running_loop().time()
        assert self.strike is not None  # _striking says so
        if now + wait < self.strike:
            return wait
        self.struck = True
        return max(0.0, self.strike - now)


class BranchingStream(ReplayingStream):
    """A stream that replays (as `ReplayingStream`) while its session says so,
    and otherwise draws from its own generator (as `Stream`), logging both."""

    __slots__ = ()

    def _note(self, reason: str, value: int | float | str) -> None:
        Stream._note(self, reason, value)
        self._session.log(self.name, reason, value)

    def _fresh(self, reason: str) -> bool:
        session = self._session
        assert isinstance(session, BranchSession)  # only a BranchSession makes these
        return session.fresh(self.name, reason)

    def raw(self, k: int, reason: str = "raw bits") -> int:
        if not self._fresh(reason):
            return ReplayingStream.raw(self, k, reason)
        value = self._bits(k)
        self._session.log(self.name, reason, hex(value))
        return value

    def below(self, n: int, reason: str) -> int:
        if n <= 1 or self._fresh(reason):
            return Stream.below(self, n, reason)
        return ReplayingStream.below(self, n, reason)

    def random(self, reason: str) -> float:
        if self._fresh(reason):
            return Stream.random(self, reason)
        return ReplayingStream.random(self, reason)

    def uniform(self, low: float, high: float, reason: str) -> float:
        if self._fresh(reason):
            return Stream.uniform(self, low, high, reason)
        return ReplayingStream.uniform(self, low, high, reason)

    def chance(self, probability: float, reason: str) -> bool:
        if probability <= 0.0 or probability >= 1.0 or self._fresh(reason):
            return Stream.chance(self, probability, reason)
        return ReplayingStream.chance(self, probability, reason)

    def exponential(self, mean: float, reason: str, quiet: float | None = None) -> float:
        session = self._session
        assert isinstance(session, BranchSession)
        if self._fresh(reason):
            if self.name in session.redraw:
                mean /= session.hotter
            return Stream.exponential(self, mean, reason, quiet)
        if not session._striking(self.name):
            return ReplayingStream.exponential(self, mean, reason, quiet)
        recorded = self._float(reason)
        if recorded is None:  # nothing left to replay: the strike's wait is drawn afresh
            wait = -math.log1p(-self._bits(_DOUBLE_BITS) * _DOUBLE_SCALE) * mean
        else:
            wait = abs(recorded)
        wait = session.cut(self.name, wait)
        self._use(reason, wait)
        return wait

    def permutation(self, n: int, reason: str) -> list[int]:
        if n <= 1 or self._fresh(reason):
            return Stream.permutation(self, n, reason)
        return ReplayingStream.permutation(self, n, reason)

    def seed_for(self, reason: str) -> int:
        if self._fresh(reason):
            return Stream.seed_for(self, reason)
        return ReplayingStream.seed_for(self, reason)
