"""Clocks that disagree: each node's wall clock has its own offset and drift.

Virtual time is one integer clock for the whole world; monotonic clocks read
it directly, so they never go backwards and never disagree. Wall clocks
(`time.time()`, `datetime.now()`) are per node: `epoch + offset + t * (1 +
drift)`, with offset and drift drawn from the entropy for each node when it
first starts (a restart keeps the machine's clock). Drift is bounded well
below 1, so each node's wall clock also only moves forward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from seedbed._core import WALL_EPOCH_NS, Stream, to_ns
from seedbed.errors import UsageError
from seedbed.world._identity import NodeRef, current_ref


@dataclass(frozen=True)
class ClockConfig:
    """How far nodes' wall clocks may stray. Off (all clocks agree) by default.

    - `offset_max`: seconds; each node's offset is uniform in [-max, +max].
    - `drift_max`: a fraction (1e-4 is 100 ppm); each node's rate error is
      uniform in [-max, +max].
    """

    offset_max: float = 0.0
    drift_max: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.offset_max) and self.offset_max >= 0):
            raise UsageError(f"offset_max must be a finite number >= 0, got {self.offset_max!r}")
        if not (math.isfinite(self.drift_max) and 0 <= self.drift_max < 0.5):
            raise UsageError(f"drift_max must be in [0, 0.5), got {self.drift_max!r}")


def draw_clock(ref: NodeRef, config: ClockConfig, stream: Stream) -> None:
    """Give a node's first incarnation its wall-clock offset and drift."""
    if config.offset_max:
        offset = stream.uniform(-config.offset_max, config.offset_max, f"clock offset {ref.name}")
        ref.wall_offset_ns = to_ns(offset)
    if config.drift_max:
        ref.wall_rate = 1.0 + stream.uniform(
            -config.drift_max, config.drift_max, f"clock drift {ref.name}"
        )


def wall_ns(now_ns: int) -> int:
    """The wall clock of the node whose code is running (the world's own: no skew)."""
    ref = current_ref()
    if ref is None:
        return WALL_EPOCH_NS + now_ns
    return WALL_EPOCH_NS + ref.wall_offset_ns + int(now_ns * ref.wall_rate)
