"""Layer 0: entropy, virtual clock and trace. Knows nothing of asyncio.

Beside them, the small facts every layer shares: node identity (`identity`),
naming a target and its replay command (`naming`), the hash-seed check
(`hashseed`), strict JSON (`safejson`), the version (`version`) and the
simulator's own contracts (`contract`).
"""

from seedbed._core.clock import NS_PER_SECOND, WALL_EPOCH_NS, VirtualClock, to_ns, to_seconds
from seedbed._core.entropy import Entropy, Stream, derive_seed
from seedbed._core.trace import Event, Trace, describe_event

__all__ = [
    "NS_PER_SECOND",
    "WALL_EPOCH_NS",
    "Entropy",
    "Event",
    "Stream",
    "Trace",
    "VirtualClock",
    "derive_seed",
    "describe_event",
    "to_ns",
    "to_seconds",
]
