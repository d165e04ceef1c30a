"""Disk faults a world puts on and takes off: `Simulation.degrade_disk` and `restore_disk`.

A degraded disk fails reads, writes and fsyncs, corrupts what it reads, or
misdirects what it writes, each with at least the probability given, on top
of its `DiskConfig` (a setting already higher is kept); restoring it puts
that config back. Each draw is the disk's own (labelled "disk n1 read error
/path", as without the fault), so a degraded disk adds no draw of its own:
only the odds change. Every fault a degraded disk can add is one the disk
model already has (`seedbed.fs`), so none is unsound: a fsynced byte
changes only through a misdirected write or a damaged read. One degradation
per disk at a time, so a restore always knows which config to put back.
"""

from __future__ import annotations

import dataclasses

from seedbed.fs import DiskConfig, SimDisk

# The DiskConfig setting behind each damage a world may raise, by fault kind
# (`SimDisk.fault_counts`): what a restore counts.
SETTINGS = {
    "read_error": "read_error_probability",
    "write_error": "write_error_probability",
    "fsync_error": "fsync_error_probability",
    "corrupt_read": "corrupt_read_probability",
    "misdirect_write": "misdirect_write_probability",
}
ERROR_KINDS = ("read_error", "write_error", "fsync_error")  # `degrade_disk`'s default


def _count(disk: SimDisk, kinds: tuple[str, ...]) -> int:
    return sum(disk.fault_counts[kind] for kind in kinds)


class DiskFaults:
    """The world's degraded disks, by node: the config to restore, the kinds
    raised and their count then."""

    __slots__ = ("_degraded",)

    def __init__(self) -> None:
        # a lookup, never iterated
        self._degraded: dict[str, tuple[DiskConfig, tuple[str, ...], int]] = {}

    def is_degraded(self, name: str) -> bool:
        return name in self._degraded

    def degrade(self, name: str, disk: SimDisk, odds: dict[str, float]) -> bool:
        """Raise each kind's odds (`odds`: fault kind -> probability) to at least
        the one given; False if the disk is already degraded."""
        if name in self._degraded:
            return False
        base = disk.config
        kinds = tuple(kind for kind in SETTINGS if kind in odds)  # SETTINGS' order
        self._degraded[name] = (base, kinds, _count(disk, kinds))
        changes = {SETTINGS[kind]: max(getattr(base, SETTINGS[kind]), odds[kind]) for kind in kinds}
        disk.config = dataclasses.replace(base, **changes)
        return True

    def restore(self, name: str, disk: SimDisk) -> int:
        """Put the config back; the faults of the raised kinds the disk injected
        while degraded (0 if it was not)."""
        entry = self._degraded.pop(name, None)
        if entry is None:
            return 0
        base, kinds, before = entry
        disk.config = base
        return _count(disk, kinds) - before
