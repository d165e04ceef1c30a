"""`DiskConfig`: the faults a simulated disk injects. Every fault is off by default."""

from __future__ import annotations

import math
from dataclasses import dataclass

from seedbed.errors import UsageError

_PROBABILITIES = (
    "read_error_probability",
    "write_error_probability",
    "corrupt_read_probability",
    "misdirect_write_probability",
)


@dataclass(frozen=True)
class DiskConfig:
    """How a simulated disk misbehaves. Validated on construction.

    - `read_error_probability`: a read raises `OSError(EIO)`; nothing is returned.
    - `write_error_probability`: a write raises `OSError(EIO)`; nothing is written.
    - `corrupt_read_probability`: a read silently returns data with one bit
      flipped in one sector of the range read (the stored data is intact: a
      re-read may return it clean).
    - `misdirect_write_probability`: a write is acknowledged and the page
      cache shows it where it was aimed, but the disk records it at another
      sector of the same file (same offset within the sector). What is read
      back before a crash looks right; after a crash the aimed-at sectors
      hold their old contents and the other sector holds the data.
    - `latency_min`/`latency_max`: seconds of virtual time every operation
      takes, drawn uniformly in [min, max) (no draw when they are equal).
    - `sector_size`: bytes per sector: the granularity of torn writes,
      corruption and misdirection.
    - `spare_one_replica`: never damage (corrupt, misdirect or tear) the same
      block on every disk that shares the simulation's `FaultCoordinator` and
      has that file, so a correct replicated system can always recover from
      some replica.
      "The same block" is the same path (as the node names it) and the same
      sector index (offset // sector_size) on different nodes' disks.
    """

    read_error_probability: float = 0.0
    write_error_probability: float = 0.0
    corrupt_read_probability: float = 0.0
    misdirect_write_probability: float = 0.0
    latency_min: float = 0.0
    latency_max: float = 0.0
    sector_size: int = 512
    spare_one_replica: bool = False

    def __post_init__(self) -> None:
        for name in _PROBABILITIES:
            value = getattr(self, name)
            if not _is_real(value) or not 0.0 <= value <= 1.0:
                raise UsageError(f"DiskConfig.{name} must be a number in [0, 1], got {value!r}")
        for name in ("latency_min", "latency_max"):
            value = getattr(self, name)
            if not _is_real(value) or not math.isfinite(value) or value < 0:
                raise UsageError(f"DiskConfig.{name} must be a finite number >= 0, got {value!r}")
        if self.latency_max < self.latency_min:
            raise UsageError(
                f"DiskConfig.latency_max must be >= latency_min "
                f"({self.latency_min!r}), got {self.latency_max!r}"
            )
        size = self.sector_size
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise UsageError(f"DiskConfig.sector_size must be an int >= 1, got {size!r}")
        if not isinstance(self.spare_one_replica, bool):
            raise UsageError(
                f"DiskConfig.spare_one_replica must be a bool, got {self.spare_one_replica!r}"
            )


def _is_real(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
