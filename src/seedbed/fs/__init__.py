"""Files for simulated nodes and real programs alike: `seedbed.fs`.

One async, bytes-only file API. Outside a simulation it uses real files:
paths are used as given, relative to the working directory like `open()`,
so the data directory is whatever directory the program passes. Inside a
simulated node it uses that node's `SimDisk`, whose root "/" is the node's
own disk (relative paths are relative to that root).

The disk has a second front door: inside a node, the Python file API
itself (`open`, `os`, `pathlib`, `shutil`, `tempfile`) reaches the same
disk, with the same durability and faults (`_interpose`, `_posix`), over
the real file system read-only (`_overlay`). Through that door the fsync of
a newly created file or folder also makes its name durable, as Linux file
systems do; `seedbed.fs` keeps the stricter contract below.

Durability model (the contract to design against; real files give at least
this much with the same calls):

- File data (writes, appends, truncations) is volatile until `fsync()` of
  that file, and then durable.
- Names (creating a file, `mkdir`, `rename`, `remove`, `rmdir`) are volatile
  until `fsync_dir` of the directory holding the name, and then durable. A
  file whose data was fsynced but whose creation was not is gone after a
  crash; a rename between two directories needs both fsynced. `rename` is
  atomic: after a crash a name refers to the old file or the new one, never
  to a mix; once its directory is fsynced, the rename has happened.
- Reads see every write made so far, synced or not (a page cache).
- A crash keeps everything durable and settles what is volatile (the
  default `DiskConfig`, `tear_model="sector"`). Fsynced data is never
  touched: not the bytes of an fsynced write, not the fsynced bytes that
  share a sector with an unsynced write. Each sector
  (`DiskConfig.sector_size`, 512 bytes by default) that an unsynced write
  touched settles on its own, each choice drawn from the seed and labelled
  ("disk n1 torn /wal sector 3", then "... garbage"), so the trace tells
  each sector's fate:
  - it holds its new bytes (the kernel wrote the dirty page back before the
    power went: writeback happens page by page, in no promised order);
  - it keeps its old bytes, zeros past the old end of file
    (`torn_sector_probability`, 1/2 by default: the page was never written
    back; drives only promise single-sector atomicity, so one multi-sector
    write can land in part);
  - or it holds garbage where the unsynced writes put bytes
    (`torn_garbage_probability`, 1/10 of those: a sector being written as
    the power failed, a drive without power-loss protection, or a new block
    of a file system in writeback mode exposing stale contents).
  Then the file's length (when it matters) either keeps the full extent of
  its unsynced writes and truncations, so lost sectors read as zeros, stale
  bytes or garbage inside the file (`torn_keep_length_probability`, 1/2:
  the size reached the journal before the data, as in ext4 `data=writeback`
  or XFS), or is cut back to end at the last sector that made it, never
  below the durable length (ext4 `data=ordered`, which commits a new size
  only after its data). An unsynced truncation is such a length: the
  classic zero-length file after a crash that "w" and rewrite invite.
  A record whose length survived may therefore hold zeros or garbage: only
  a checksum per record tells. `tear_model="prefix"` restores seedbed 0.1's
  model: only the last unsynced write can survive, as a prefix ending on a
  sector boundary, and earlier unsynced writes are lost.
- Faults, all off by default (`DiskConfig`): EIO on reads and writes, EIO on
  fsync (the writes it covered are then lost at the next crash, though reads
  show them until then, and a retried fsync succeeds: only the error says so),
  bit flips in data returned by reads, misdirected writes, latency. With
  `spare_one_replica`, a shared `FaultCoordinator` keeps every block (path
  and sector index) undamaged on at least one disk.

A simulated operation takes its latency in virtual time and then takes
effect; if the node crashes meanwhile, it has no effect. Files opened before
a crash raise OSError(EIO) afterwards. Errors are Python's own OSError
subclasses (FileNotFoundError, FileExistsError, IsADirectoryError,
NotADirectoryError, OSError with errno EIO...).
"""

from seedbed.fs._config import DiskConfig
from seedbed.fs._coordinator import FaultCoordinator
from seedbed.fs._file import File
from seedbed.fs._simdisk import FAULT_KINDS, SimDisk, SimFile

# isort: split
# The API imports the world (for node identity), and the world imports the
# classes above from here: bind them first, so either import order works.
from seedbed.fs._api import (
    exists,
    fsync_dir,
    listdir,
    mkdir,
    open,
    read_file,
    remove,
    rename,
    rmdir,
    write_file,
)

# isort: split
# The Python file API inside a node (`open`, `os`, `pathlib`...) on its disk: a provider
# of interposition stand-ins, registered at import.
from seedbed.fs import _interpose  # noqa: F401

__all__ = [
    "FAULT_KINDS",
    "DiskConfig",
    "FaultCoordinator",
    "File",
    "SimDisk",
    "SimFile",
    "exists",
    "fsync_dir",
    "listdir",
    "mkdir",
    "open",
    "read_file",
    "remove",
    "rename",
    "rmdir",
    "write_file",
]
