"""Clocks that disagree: each node's wall clock has its own offset and drift.

Virtual time is one integer clock for the whole world; monotonic clocks read
it directly, so they never go backwards and never disagree. Wall clocks
(`time.time()`, `datetime.now()`) are per node: `epoch + offset + t * (1 +
drift)`, with offset and drift drawn from the entropy for each node when it
first starts (a restart keeps the machine's clock). Drift is bounded well
below 1, so each node's wall clock also only moves forward, unless
`Simulation.jump_clock` steps it (as an NTP step would), either way.
`Simulation.skew_clock` changes a running node's drift (continuously: the
clock reads on from where it was) and may step it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from seedbed._core import WALL_EPOCH_NS, Stream, to_ns
from seedbed._core.identity import NodeRef, current_ref
from seedbed._core.validate import check_fraction, check_seconds


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
        check_seconds("ClockConfig", "offset_max", self.offset_max, allow_zero=True)
        # Well below 1, so every node's wall clock still only moves forward.
        check_fraction("ClockConfig", "drift_max", self.drift_max, below=0.5)


def draw_clock(ref: NodeRef, config: ClockConfig, stream: Stream) -> None:
    """Give a node's first incarnation its wall-clock offset and drift."""
    if config.offset_max:
        offset = stream.uniform(-config.offset_max, config.offset_max, f"clock offset {ref.name}")
        ref.wall_offset_ns = to_ns(offset)
    if config.drift_max:
        ref.wall_rate = 1.0 + stream.uniform(
            -config.drift_max, config.drift_max, f"clock drift {ref.name}"
        )


def jump(ref: NodeRef, ns: int) -> None:
    """Step a node's wall clock by `ns` (an NTP step); its next incarnation keeps it."""
    ref.wall_offset_ns += ns


def skew(ref: NodeRef, now_ns: int, step_ns: int, drift: float) -> None:
    """Give a node's wall clock a new rate error `drift`, from now on, and step it by
    `step_ns`: without a step the clock reads on from where it was (a crystal
    whose rate changed, with the temperature say), so it still only moves forward
    when `step_ns` is 0. Its next incarnation keeps both.
    """
    old = int(now_ns * ref.wall_rate)
    ref.wall_rate = 1.0 + drift
    ref.wall_offset_ns += old - int(now_ns * ref.wall_rate) + step_ns


def wall_ns(now_ns: int) -> int:
    """The wall clock of the node whose code is running (the world's own: no skew)."""
    ref = current_ref()
    if ref is None:
        return WALL_EPOCH_NS + now_ns
    ref.wall_reads += 1  # what makes a clock fault effective (counted, never hashed)
    return WALL_EPOCH_NS + ref.wall_offset_ns + int(now_ns * ref.wall_rate)
