"""Files for simulated nodes and real programs alike: `seedbed.fs`.

One async, bytes-only file API. Outside a simulation it uses real files:
paths are used as given, relative to the working directory like `open()`,
so the data directory is whatever directory the program passes. Inside a
simulated node it uses that node's `SimDisk`, whose root "/" is the node's
own disk (relative paths are relative to that root).

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
- A crash keeps everything durable and drops everything volatile, with one
  exception: the last unsynced write to each file that survives may be torn:
  a prefix of it, ending on a sector boundary (`DiskConfig.sector_size`,
  512 bytes by default), persists. The entropy decides between nothing, the
  whole write and each such prefix. Earlier unsynced writes are lost even if
  the last one persists.
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
