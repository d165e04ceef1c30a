"""`DiskConfig`: the faults a simulated disk injects.

Every fault is off by default except tearing at a crash, which only touches
data a program never fsynced (a correct program already survives losing it).
"""

from __future__ import annotations

from dataclasses import dataclass

from seedbed._core.validate import (
    check_at_least,
    check_bool,
    check_choice,
    check_positive_int,
    check_probability,
    check_seconds,
)

_PROBABILITIES = (
    "read_error_probability",
    "write_error_probability",
    "fsync_error_probability",
    "corrupt_read_probability",
    "misdirect_write_probability",
    "torn_sector_probability",
    "torn_garbage_probability",
    "torn_keep_length_probability",
)
TEAR_MODELS = ("sector", "prefix")


@dataclass(frozen=True)
class DiskConfig:
    """How a simulated disk misbehaves. Validated on construction.

    - `read_error_probability`: a read raises `OSError(EIO)`; nothing is returned.
    - `write_error_probability`: a write raises `OSError(EIO)`; nothing is written.
    - `fsync_error_probability`: an fsync raises `OSError(EIO)`, and the
      file's writes since its last good fsync never become durable, although
      reads go on showing them until a crash; a retried fsync then succeeds
      with nothing left to sync (as on Linux since 4.13, "fsyncgate"). A
      program must treat a failed fsync as lost data, not retry it.
    - `corrupt_read_probability`: a read silently returns data with one bit
      flipped in one sector of the range read (the stored data is intact: a
      re-read may return it clean).
    - `misdirect_write_probability`: a write is acknowledged and the page
      cache shows it where it was aimed, but the disk records it at another
      sector of the same file (same offset within the sector). What is read
      back before a crash looks right; after a crash the aimed-at sectors
      hold their old contents and the other sector holds the data.
    - `torn_sector_probability`: at a crash, the chance that a sector an
      unsynced write touched does not get its new bytes (each sector drawn on
      its own). Such a sector keeps its old bytes (zeros past the old end of
      file), or, with `torn_garbage_probability`, holds garbage where the
      unsynced writes put bytes (never over bytes they did not write).
    - `torn_keep_length_probability`: at a crash that leaves some of a
      file's unsynced sectors behind, the chance that the file keeps the
      full length its writes gave it (the lost sectors then read as old
      bytes, zeros or garbage inside the file) rather than being cut back to
      end at the last sector that made it (never below its durable length).
    - `tear_model`: "sector" (the default: the three settings above) or
      "prefix", the model of seedbed 0.1: only the last unsynced write to
      each file can survive, as a prefix ending on a sector boundary
      (the torn_* probabilities are then unused).
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
    fsync_error_probability: float = 0.0
    corrupt_read_probability: float = 0.0
    misdirect_write_probability: float = 0.0
    torn_sector_probability: float = 0.5
    torn_garbage_probability: float = 0.1
    torn_keep_length_probability: float = 0.5
    tear_model: str = "sector"
    latency_min: float = 0.0
    latency_max: float = 0.0
    sector_size: int = 512
    spare_one_replica: bool = False

    def __post_init__(self) -> None:
        for name in _PROBABILITIES:
            check_probability("DiskConfig", name, getattr(self, name))
        for name in ("latency_min", "latency_max"):
            check_seconds("DiskConfig", name, getattr(self, name), allow_zero=True)
        check_at_least(
            "DiskConfig", "latency_max", self.latency_max, "latency_min", self.latency_min
        )
        check_positive_int("DiskConfig", "sector_size", self.sector_size, maximum=1 << 20)
        check_choice("DiskConfig", "tear_model", self.tear_model, TEAR_MODELS)
        check_bool("DiskConfig", "spare_one_replica", self.spare_one_replica)
