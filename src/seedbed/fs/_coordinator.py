"""`FaultCoordinator`: keeps one replica of every block undamaged.

Replicated systems survive a damaged block by reading it from another
replica. A fault injector that damages the same block on every replica
reports a "bug" no correct system could avoid, so the world shares one
coordinator among the disks of a simulation, and disks configured with
`spare_one_replica` ask it before damaging anything.

"The same block" is one path, as the nodes name it, and one sector index
(offset // sector_size): replicas are expected to keep their data under the
same paths on their own disks. Damage is corrupting a read, misdirecting a
write (both the sectors aimed at and the sectors hit), or leaving a sector
of an unsynced write with old bytes or garbage at a crash. The guarantee:
for any block, of the N disks that now have a file at that path, at most
N-1 were ever damaged there. Disks without the file (a client's disk, a
replica that has not created it yet) do not count, so
the first disk to create a file is not damaged there until another has it.

The record only grows: a block once damaged on a disk counts as damaged
there for the rest of the run (even if since rewritten), and a rename copies
the source's record to the destination, so later decisions see damage that
moved. One gap: the check happens when damage is done, so a rename can later
carry a damaged block onto a name already damaged on every other replica,
and a disk that removes its clean copy leaves only damaged ones; keep
replicated data under stable names if your system relies on this.
"""

from __future__ import annotations

from collections.abc import Iterable


class FaultCoordinator:
    """Shared by every disk of one simulation; vetoes damage that would hit all replicas."""

    __slots__ = ("_damaged", "_disks", "_files")

    def __init__(self) -> None:
        self._disks: list[str] = []
        self._files: dict[str, frozenset[str]] = {}  # disk -> the paths of its files
        self._damaged: dict[str, dict[int, set[str]]] = {}  # path -> sector -> disks

    @property
    def disks(self) -> list[str]:
        """The disks registered, in order."""
        return list(self._disks)

    def register(self, disk: str) -> None:
        """Count `disk` as a possible replica. Names must be unique."""
        if disk in self._disks:
            raise ValueError(f"disk {disk!r} is already registered with this coordinator")
        self._disks.append(disk)
        self._files[disk] = frozenset()

    def files_changed(self, disk: str, paths: Iterable[str]) -> None:
        """`disk` now has files at exactly these paths (after a create, rename, remove, crash)."""
        self._files[disk] = frozenset(paths)

    def holders(self, path: str) -> list[str]:
        """The registered disks that now have a file at `path`, in registration order."""
        return [disk for disk in self._disks if path in self._files[disk]]

    def permit(self, disk: str, path: str, sectors: Iterable[int]) -> bool:
        """May `disk` damage these sectors of `path`? If so, they are recorded as damaged.

        Granted only if, for every sector, some other disk that has the file
        stays undamaged there. All or nothing: a refused request records nothing.
        """
        holders = len(set(self.holders(path)) | {disk})
        wanted = sorted(set(sectors))
        record = self._damaged.get(path, {})
        for sector in wanted:
            if len(record.get(sector, set()) | {disk}) >= holders:
                return False
        record = self._damaged.setdefault(path, {})
        for sector in wanted:
            record.setdefault(sector, set()).add(disk)
        return True

    def damaged(self, path: str, sector: int) -> list[str]:
        """The disks on which this block was ever damaged, sorted."""
        return sorted(self._damaged.get(path, {}).get(sector, set()))

    def renamed(self, disk: str, src: str, dst: str) -> None:
        """`disk` renamed `src` to `dst`: its damage under `src` now also counts under `dst`."""
        prefix = src.rstrip("/") + "/"
        moved = [p for p in sorted(self._damaged) if p == src or p.startswith(prefix)]
        for path in moved:
            target = dst + path[len(src) :]
            for sector, disks in sorted(self._damaged[path].items()):
                if disk in disks:
                    self._damaged.setdefault(target, {}).setdefault(sector, set()).add(disk)
