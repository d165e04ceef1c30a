"""The virtual clock: integer nanoseconds, never floats inside.

Floats lose nanoseconds after a few months of virtual time and round
differently depending on how a sum was formed; integers do neither. Seconds
appear only at the edges (`loop.time()`, user-facing settings).
"""

from __future__ import annotations

from seedbed._core.contract import broken, require

NS_PER_SECOND = 1_000_000_000

# Where wall clocks inside a run start: 2024-01-01T00:00:00Z. A fixed epoch
# keeps `time.time()` inside a run a pure function of the seed.
WALL_EPOCH_NS = 1_704_067_200 * NS_PER_SECOND


def to_ns(seconds: float) -> int:
    """Seconds (user-facing) to integer nanoseconds, rounded to nearest."""
    return round(seconds * NS_PER_SECOND)


def to_seconds(ns: int) -> float:
    return ns / NS_PER_SECOND


class VirtualClock:
    """Monotonic virtual time. The loop moves it; everything else reads it."""

    __slots__ = ("now",)

    def __init__(self, start_ns: int = 0) -> None:
        require(start_ns >= 0, "virtual time starts at or after zero", start_ns=start_ns)
        self.now = start_ns

    def advance_to(self, when_ns: int) -> None:
        """Jump forward to `when_ns` (or stay at it): time never goes backwards.

        A call that would move it back is a `SimulatorBug` (the caller's
        rule, not the user's): the loop only ever wakes for a later timer.
        """
        if when_ns < self.now:
            broken("the clock never moves backwards", now=self.now, to=when_ns)
        self.now = when_ns
