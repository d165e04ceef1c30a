"""A simulated disk's durable state, written to a folder and read back into a new disk.

What a disk image holds is what a crash that lost every unsynced change
would leave: the directories and files reachable by durable names, each
file's durable bytes, its mode and time, and which directories show the
real file system beneath (`_overlay`) with the names they hide. Loading an
image into a fresh disk makes all of it durable at once, as a machine
powered on with that disk.

One node's disk in a folder (format 1, documented in
docs/reference/file-formats.md):

    tree.json          {"format": "seedbed-disk", "version": 1,
                        "dirs": [{"path": "/", "merged": true, "hidden": [],
                                  "mode": 493, "mtime_ns": 0}, ...],
                        "files": [{"path": "/data/log", "blob": "0", "size": 12,
                                   "mode": 420, "mtime_ns": ...}, ...]}
    blobs/0, blobs/1   each file's bytes, as they are

Paths under the folder the node's processes start in (`SimDisk.home`, the
working directory) are written from it, "./data/log" ("." for the folder
itself), and load under the loading world's own: a program keeping its
files in a relative folder finds them from another checkout. Other paths
are absolute. Parents come before children. Reading checks everything (JSON only, never
unpickled; regular files only; every path absolute and normal, under a
directory of the image; every size as its blob's) and refuses anything
else in one line naming the file and what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core import safejson
from seedbed._core.files import regular_file
from seedbed.errors import UsageError
from seedbed.fs._model import DirNode, FileNode, join, split_path
from seedbed.fs._simdisk import SimDisk

FORMAT, VERSION = "seedbed-disk", 1
TREE = "tree.json"
MAX_TREE = 256 << 20  # bytes of tree.json a reader takes


@dataclass(frozen=True)
class DirRecord:
    path: str
    merged: bool
    hidden: tuple[str, ...]
    mode: int
    mtime_ns: int


@dataclass(frozen=True)
class FileRecord:
    path: str
    data: bytes
    mode: int
    mtime_ns: int


@dataclass(frozen=True)
class DiskImage:
    """A disk's durable state: directories (parents first) and files."""

    dirs: tuple[DirRecord, ...]
    files: tuple[FileRecord, ...]

    def digest(self) -> str:
        """16 hex digits that change with any name, byte, mode or time of the image."""
        h = hashlib.blake2b(digest_size=8)
        for d in self.dirs:
            h.update(repr((d.path, d.merged, d.hidden, d.mode, d.mtime_ns)).encode())
        for f in self.files:
            h.update(repr((f.path, len(f.data), f.mode, f.mtime_ns)).encode())
            h.update(f.data)
        return h.hexdigest()


class ImageError(UsageError):
    """A disk image folder that cannot be read: one line, what to do."""


def portable(path: str, home: str) -> str:
    """`path` as an image writes it: from `home` when under it (see the module doc)."""
    if home != "/" and (path == home or path.startswith(home + "/")):
        return "." + path[len(home) :]
    return path


def placed(path: str, home: str) -> str:
    """An image's path where a disk whose home is `home` keeps it."""
    if path == "." or path.startswith("./"):
        return home.rstrip("/") + path[1:] if path != "." else home
    return path


def image_of(disk: SimDisk) -> DiskImage:
    """The disk's durable state now (what a crash losing all unsynced work keeps)."""
    dirs: list[DirRecord] = []
    files: list[FileRecord] = []
    for real_path, node in disk.model.durable_nodes():
        path = portable(real_path, disk.home)
        if isinstance(node, DirNode):
            hidden = tuple(sorted(node.durable_hidden))
            dirs.append(DirRecord(path, node.merged, hidden, node.mode, node.mtime_ns))
        else:
            files.append(FileRecord(path, bytes(node.durable), node.mode, node.mtime_ns))
    return DiskImage(tuple(dirs), tuple(files))


def restore(disk: SimDisk, image: DiskImage) -> None:
    """Give a fresh disk (never written, never crashed) the image, all of it durable."""
    model = disk.model
    if disk.crashes or model.file_paths() or model.listdir(()):
        raise UsageError(f"a disk image loads into a fresh disk; {disk.name}'s was used")
    home = split_path(disk.home)
    dirs = sorted(image.dirs, key=lambda d: len(split_path(placed(d.path, disk.home))))
    for record in dirs:
        parts = split_path(placed(record.path, disk.home))
        if parts[: len(home)] == home:  # the home folder and the real ones above it
            for depth in range(1, len(home) + 1):
                if model.lookup(home[:depth]) is None:
                    model.adopt_dir(home[:depth])  # merged: copied up from the real one
        found = model.lookup(parts)
        node = found if isinstance(found, DirNode) else model.adopt_dir(parts)
        node.merged = record.merged
        node.hidden, node.durable_hidden = set(record.hidden), set(record.hidden)
        node.mode, node.mtime_ns = record.mode, record.mtime_ns
    for file in image.files:
        made: FileNode = model.adopt_file(split_path(placed(file.path, disk.home)), file.data)
        made.mode, made.mtime_ns = file.mode, file.mtime_ns
    disk.files_changed()


def write_image(folder: Path, image: DiskImage) -> None:
    """Write one disk's image into `folder` (made here; it must not exist)."""
    (folder / "blobs").mkdir(parents=True)
    files = []
    for index, file in enumerate(image.files):
        (folder / "blobs" / str(index)).write_bytes(file.data)
        files.append({"path": file.path, "blob": str(index), "size": len(file.data),
                      "mode": file.mode, "mtime_ns": file.mtime_ns})  # fmt: skip
    dirs = [{"path": d.path, "merged": d.merged, "hidden": list(d.hidden), "mode": d.mode,
             "mtime_ns": d.mtime_ns} for d in image.dirs]  # fmt: skip
    tree = {"format": FORMAT, "version": VERSION, "dirs": dirs, "files": files}
    (folder / TREE).write_text(json.dumps(tree, indent=1, sort_keys=True) + "\n")


def read_image(folder: Path) -> DiskImage:
    """One disk's image from `folder`, checked (ImageError names what is wrong)."""
    tree = _read_tree(folder / TREE)
    dirs = tuple(_dir(entry, folder) for entry in _list(tree, "dirs", folder))
    known = {d.path for d in dirs}
    if "/" not in known:
        raise _bad(folder / TREE, "it has no root directory '/'")
    files: list[FileRecord] = []
    for entry in _list(tree, "files", folder):
        files.append(_file(entry, folder))
    seen: set[str] = set()
    for path in [d.path for d in dirs] + [f.path for f in files]:
        parent = _parent(path)
        if path in seen or (parent is not None and parent not in known):
            why = "twice" if path in seen else "under a directory the image does not have"
            raise _bad(folder / TREE, f"it lists {path!r} {why}")
        seen.add(path)
        if parent is not None and parent not in seen:
            raise _bad(folder / TREE, f"it lists {path!r} before its directory")
    return DiskImage(dirs, tuple(files))


def _parent(path: str) -> str | None:
    """The directory an image path is in; None for the root and the home folder
    (whose real folders above are the loading machine's)."""
    if path in ("/", "."):
        return None
    if path.startswith("./"):
        head = path.rsplit("/", 1)[0]
        return head
    return join(split_path(path)[:-1])


def _read_tree(path: Path) -> dict[str, Any]:
    try:
        regular_file(path)
        if path.stat().st_size > MAX_TREE:
            raise _bad(path, f"it is over {MAX_TREE >> 20} MiB")
        tree = safejson.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad(path, "it is missing: this is not a seedbed disk image") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _bad(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if not isinstance(tree, dict) or tree.get("format") != FORMAT:
        raise _bad(path, f"it is not a {FORMAT} tree")
    if tree.get("version") != VERSION:
        raise _bad(path, f"it is format version {tree.get('version')!r}; this seedbed reads "
                   f"version {VERSION}: load it with the seedbed that wrote it")  # fmt: skip
    return tree


def _list(tree: dict[str, Any], key: str, folder: Path) -> list[dict[str, Any]]:
    value = tree.get(key)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _bad(folder / TREE, f"its {key!r} is not a list of objects")
    return value


def _field(entry: dict[str, Any], key: str, kind: type, where: Path) -> Any:
    value = entry.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _bad(where, f"an entry's {key!r} is not a {kind.__name__}: {value!r:.60}")
    return value


def _path(entry: dict[str, Any], where: Path) -> str:
    path = _field(entry, "path", str, where)
    text = "/" + path[2:] if path.startswith("./") else "/" if path == "." else path
    if not text.startswith("/") or "\0" in text or join(split_path(text)) != text:
        raise _bad(where, f"{path!r:.80} is not an absolute or ./ relative normal path")
    return str(path)


def _numbers(entry: dict[str, Any], where: Path) -> tuple[int, int]:
    mode, mtime = _field(entry, "mode", int, where), _field(entry, "mtime_ns", int, where)
    if not 0 <= mode <= 0o7777 or mtime < 0:
        raise _bad(where, f"an entry's mode or time is out of range: {mode!r}, {mtime!r}")
    return mode, mtime


def _dir(entry: dict[str, Any], folder: Path) -> DirRecord:
    where = folder / TREE
    path = _path(entry, where)
    hidden = _field(entry, "hidden", list, where)
    if not all(isinstance(n, str) and n and "/" not in n and n not in (".", "..") for n in hidden):
        raise _bad(where, f"{path!r}'s hidden names are not names: {hidden!r:.80}")
    merged = _field(entry, "merged", bool, where)
    return DirRecord(path, merged, tuple(sorted(set(hidden))), *_numbers(entry, where))


def _file(entry: dict[str, Any], folder: Path) -> FileRecord:
    where = folder / TREE
    path = _path(entry, where)
    if path in ("/", "."):
        raise _bad(where, "a file cannot be the root or the home folder")
    blob, size = _field(entry, "blob", str, where), _field(entry, "size", int, where)
    if not blob.isdigit():
        raise _bad(where, f"{path!r}'s blob is not a blob's name: {blob!r:.40}")
    data = _blob(folder / "blobs" / blob, size)
    return FileRecord(path, data, *_numbers(entry, where))


def _blob(path: Path, size: int) -> bytes:
    try:
        regular_file(path)
        if os.lstat(path).st_size != size or not stat.S_ISREG(os.lstat(path).st_mode):
            raise _bad(path, f"it does not hold the {size} bytes its tree says")
        return path.read_bytes()
    except FileNotFoundError:
        raise _bad(path, "it is missing") from None
    except ImageError:
        raise
    except OSError as exc:
        raise _bad(path, str(exc)) from None


def _bad(path: Path, why: str) -> ImageError:
    return ImageError(f"cannot load the disk image {path}: {why}")
