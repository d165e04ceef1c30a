"""Disk faults a world puts on and takes off: `Simulation.degrade_disk` and `restore_disk`.

A degraded disk fails reads, writes and fsyncs with at least the given
probability, on top of its `DiskConfig` (a setting already higher is kept);
restoring it puts that config back. Each draw is the disk's own (labelled
"disk n1 read error /path", as without the fault), so a degraded disk adds
no draw of its own: only the odds change. One degradation per disk at a time,
so a restore always knows which config to put back.
"""

from __future__ import annotations

import dataclasses

from seedbed.fs import DiskConfig, SimDisk

# The errors a degraded disk raises more often: what restore counts.
ERROR_KINDS = ("read_error", "write_error", "fsync_error")


def _errors(disk: SimDisk) -> int:
    return sum(disk.fault_counts[kind] for kind in ERROR_KINDS)


class DiskFaults:
    """The world's degraded disks, by node: the config to restore and the error count then."""

    __slots__ = ("_degraded",)

    def __init__(self) -> None:
        self._degraded: dict[str, tuple[DiskConfig, int]] = {}  # a lookup, never iterated

    def is_degraded(self, name: str) -> bool:
        return name in self._degraded

    def degrade(self, name: str, disk: SimDisk, probability: float) -> bool:
        """Raise the disk's error odds to at least `probability`; False if already degraded."""
        if name in self._degraded:
            return False
        base = disk.config
        self._degraded[name] = (base, _errors(disk))
        disk.config = dataclasses.replace(
            base,
            read_error_probability=max(base.read_error_probability, probability),
            write_error_probability=max(base.write_error_probability, probability),
            fsync_error_probability=max(base.fsync_error_probability, probability),
        )
        return True

    def restore(self, name: str, disk: SimDisk) -> int:
        """Put the config back; the errors the disk raised while degraded (0 if it was not)."""
        entry = self._degraded.pop(name, None)
        if entry is None:
            return 0
        base, errors_before = entry
        disk.config = base
        return _errors(disk) - errors_before
