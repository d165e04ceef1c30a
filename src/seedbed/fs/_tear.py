"""What a crash leaves of a file's unsynced writes: `Tearer`.

Two models, chosen by `DiskConfig.tear_model`:

- "sector" (the default): every sector that an unsynced write touched
  settles on its own. It holds the new bytes, keeps the old ones (zeros past
  the old end of file), or holds garbage where the unsynced writes put
  bytes; the file's length then keeps the full extent of the writes or is
  cut back to cover only the sectors that made it. This is how power loss
  tears data on real disks (see the `seedbed.fs` docstring for the cases).
- "prefix": the model of seedbed 0.1: only the last unsynced write can
  survive, as a prefix ending on a sector boundary, and the file is never
  longer than what survived.

Every choice is a labelled draw ("disk n1 torn /wal sector 3" is 1 when that
sector did not get its new bytes, then "... sector 3 garbage" says whether it
holds garbage or its old bytes), so the trace tells each sector's fate. With
`spare_one_replica`, a tear the `FaultCoordinator` refuses leaves the sector
its new bytes and counts as "vetoed" in `SimDisk.fault_counts`. A crash is
rare next to writes: none of this runs on the write path.

Contracts: a torn file's length lies between its synced and its written
length (the model checks the same of every settled file, with its bytes);
a torn prefix is partial and ends on a sector boundary.
"""

from __future__ import annotations

from collections.abc import Callable

from seedbed._core.contract import require
from seedbed._core.entropy import Stream
from seedbed.fs._config import DiskConfig
from seedbed.fs._model import FileNode, Write, apply

Permit = Callable[[str, list[int]], bool]  # may this path's sectors be damaged? (the coordinator)

NEW, OLD, GARBAGE = "new", "old", "garbage"


class Tearer:
    """Settles a file's pending writes at a crash, drawing from one disk's stream."""

    __slots__ = ("_config", "_counts", "_name", "_permit", "_shown", "_stream")

    def __init__(
        self,
        stream: Stream,
        config: DiskConfig,
        name: str,
        permit: Permit,
        counts: dict[str, int],
        shown: Callable[[str], str] = str,
    ) -> None:
        self._stream = stream
        self._shown = shown  # a path as labels name it (`SimDisk.shown`)
        self._config = config
        self._name = name
        self._permit = permit
        self._counts = counts

    def settle(self, node: FileNode) -> bytearray:
        """The file's contents after the crash, from its durable bytes and pending writes."""
        if not node.pending:
            return bytearray(node.durable)
        if self._config.tear_model == "prefix":
            return self._last_write_prefix(node)
        return self._by_sector(node)

    # -- the per-sector model ---------------------------------------------------

    def _by_sector(self, node: FileNode) -> bytearray:
        size = self._config.sector_size
        old = node.durable
        new = bytearray(old)
        for op in node.pending:
            apply(new, op)
        result = bytearray(old)
        result.extend(bytes(max(len(new) - len(old), 0)))
        reach = len(old)  # the length if cut back: the old end, or the last sector that landed
        fates: dict[int, str] = {}
        for sector, spans in sorted(_written_spans(node, size).items()):
            low, high = sector * size, min((sector + 1) * size, len(new))
            if low >= len(new):  # written, then truncated away: nothing to settle
                break
            fate = fates[sector] = self._fate(node.path, sector)
            if fate == NEW:
                result[low:high] = new[low:high]
            elif fate == GARBAGE:
                for start, end in spans:
                    result[start:end] = self._garbage(end - start)
            if fate != OLD:
                reach = max(reach, high)
        length = self._length(node.path, full=len(new), cut=reach)
        require(
            min(len(old), len(new)) <= length <= max(len(old), len(new)) and len(old) <= reach,
            "a torn file's length lies between its synced and its written length",
            path=node.path, synced=len(old), written=len(new), left=length,
        )  # fmt: skip
        self._count(fates, length)
        del result[length:]
        return result

    def _fate(self, path: str, sector: int) -> str:
        """New, old or garbage for one sector: drawn, then cleared by the coordinator."""
        config, label = self._config, f"disk {self._name} torn {self._shown(path)} sector {sector}"
        if not self._stream.chance(config.torn_sector_probability, label):
            return NEW
        garbage = self._stream.chance(config.torn_garbage_probability, f"{label} garbage")
        if not self._permit(path, [sector]):
            return NEW
        return GARBAGE if garbage else OLD

    def _garbage(self, n: int) -> bytes:
        """`n` random bytes; their draw is explained by the recorded "garbage" draw before it."""
        return self._stream.raw(8 * n, "garbage bytes").to_bytes(n, "little")

    def _length(self, path: str, *, full: int, cut: int) -> int:
        """The write's full extent or the cut-back length, when they differ."""
        if full == cut:
            return full
        label = f"disk {self._name} torn {self._shown(path)} keeps length"
        keep = self._stream.chance(self._config.torn_keep_length_probability, label)
        return full if keep else cut

    def _count(self, fates: dict[int, str], length: int) -> None:
        """Count the sectors left without their new bytes inside the file (the visible damage)."""
        size = self._config.sector_size
        torn = sum(1 for sector, fate in fates.items() if fate != NEW and sector * size < length)
        if torn:
            self._counts["torn_write"] += 1
            self._counts["torn_sector"] += torn

    # -- the last-write-prefix model (seedbed 0.1) ------------------------------

    def _last_write_prefix(self, node: FileNode) -> bytearray:
        contents = bytearray(node.durable)
        last = node.pending[-1]
        if isinstance(last, Write):
            kept = self._prefix(node.path, last)
            if kept:
                apply(contents, Write(last.offset, last.data[:kept]))
        return contents

    def _prefix(self, path: str, write: Write) -> int:
        """How many bytes of `write` persist: 0, all, or a prefix ending on a sector boundary."""
        size, start, length = self._config.sector_size, write.offset, len(write.data)
        first_boundary = (start // size + 1) * size
        interior = (start + length - 1 - first_boundary) // size + 1 if length else 0
        options = max(interior, 0) + 2
        k = self._stream.below(options, f"disk {self._name} tear {self._shown(path)}")
        if k == 0 or k == options - 1:
            return 0 if k == 0 else length
        kept = first_boundary + (k - 1) * size - start
        require(
            0 < kept < length and (start + kept) % size == 0,
            "a torn prefix is partial and ends on a sector boundary",
            path=path, offset=start, kept=kept, length=length,
        )  # fmt: skip
        sectors = list(range(start // size, (start + length - 1) // size + 1))
        if not self._permit(path, sectors):
            return 0
        self._counts["torn_write"] += 1
        self._counts["torn_sector"] += len(sectors) - ((start + kept) // size - start // size)
        return kept


def _written_spans(node: FileNode, size: int) -> dict[int, list[tuple[int, int]]]:
    """For each sector the pending writes touched, the byte ranges they wrote in it."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for op in node.pending:
        if not isinstance(op, Write) or not op.data:
            continue
        end = op.offset + len(op.data)
        for sector in range(op.offset // size, (end - 1) // size + 1):
            low, high = max(op.offset, sector * size), min(end, (sector + 1) * size)
            spans.setdefault(sector, []).append((low, high))
    return spans
