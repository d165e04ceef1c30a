"""A world's disks, saved to a folder at the end of a run and loaded at the start of another.

For restart tests across code versions: run one version's scenario and keep
its nodes' disks (`seedbed run T --seed N --save-disks DIR`), then start the
next version's on them (`--load-disks DIR`, `Simulation(disks=DIR)`,
`Scenario(..., disks=DIR)`). A node the image names starts on its disk, as a
machine powered on; a node it does not name starts empty.

What is saved (`state`): "synced", what every disk holds durably (a crash
that lost all unsynced work would leave it), or "crashed", what a crash at
the end of the run leaves (unsynced sectors kept, lost or torn as the seed
draws: the world is over, its disks are crashed for it).

The folder (format 1, docs/reference/file-formats.md):

    seedbed-disks.json   {"format": "seedbed-disks", "version": 1, "state": "synced",
                          "seed": 7, "seedbed": "0.1.0",
                          "nodes": [{"name": "n1", "folder": "0", "digest": "..."}]}
    0/, 1/ ...           one node's disk each (`seedbed.fs._image`)

It is written beside its place and moved in whole, so a run killed while
saving leaves the old image or none, never half of one; a folder that is
not a disk image (and not empty) is never replaced.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core import safejson
from seedbed._core.files import regular_file
from seedbed._core.version import VERSION as SEEDBED_VERSION
from seedbed.errors import UsageError
from seedbed.fs._image import DiskImage, ImageError, image_of, read_image, write_image
from seedbed.fs._simdisk import SimDisk

MANIFEST = "seedbed-disks.json"
FORMAT, VERSION = "seedbed-disks", 1
STATES = ("synced", "crashed")


@dataclass(frozen=True)
class SaveRequest:
    folder: Path
    state: str


_save_requests: list[SaveRequest] = []  # the innermost last: `saving`
_load_requests: list[Path] = []  # the innermost last: `loading`


@contextlib.contextmanager
def loading(folder: str | Path) -> Iterator[None]:
    """Every simulation made inside the block without `disks=` starts on the disks
    in `folder`: how --load-disks reaches a function that builds its own world."""
    load(folder)  # refused here, in one line, before anything runs
    _load_requests.append(Path(folder))
    try:
        yield
    finally:
        _load_requests.pop()


def load_request() -> Path | None:
    return _load_requests[-1] if _load_requests else None


@contextlib.contextmanager
def saving(folder: str | Path, state: str = "synced") -> Iterator[None]:
    """Every simulation that ends inside the block saves its disks to `folder`
    (the last one's stay): how the CLI's --save-disks reaches a target's world."""
    request = SaveRequest(Path(folder), check_state(state))
    check_folder(request.folder)
    _save_requests.append(request)
    try:
        yield
    finally:
        _save_requests.remove(request)


def save_request() -> SaveRequest | None:
    return _save_requests[-1] if _save_requests else None


def check_state(state: Any) -> str:
    if state not in STATES:
        raise UsageError(f"the disks' state must be one of {', '.join(STATES)}, got {state!r:.40}")
    return str(state)


def check_folder(folder: Path) -> None:
    """A place an image may go: absent, empty, or an image (replaced whole)."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise UsageError(f"cannot save disks to {folder}: it is not a folder; name a new one")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MANIFEST).exists():
        raise UsageError(
            f"cannot save disks to {folder}: it holds files that are not a seedbed disk "
            "image, which saving would replace; name a new or empty folder"
        )


def save(folder: str | Path, disks: list[tuple[str, SimDisk]], *, state: str, seed: int) -> None:
    """Write the disks' images (crashing them first for "crashed") into `folder`."""
    target = Path(folder)
    check_folder(target)
    if check_state(state) == "crashed":
        for _, disk in disks:
            disk.crash()
    images = [(name, image_of(disk)) for name, disk in disks]
    partial = target.parent / f".{target.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        nodes = []
        for index, (name, image) in enumerate(images):
            write_image(partial / str(index), image)
            nodes.append({"name": name, "folder": str(index), "digest": image.digest()})
        manifest = {"format": FORMAT, "version": VERSION, "state": state, "seed": seed,
                    "seedbed": SEEDBED_VERSION, "nodes": nodes}  # fmt: skip
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        _move_into_place(partial, target)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise UsageError(
            f"cannot save disks to {target}: {exc.strerror or exc}; make room or fix "
            "the folder, then run again"
        ) from None


def _move_into_place(partial: Path, target: Path) -> None:
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    partial.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def load(folder: str | Path) -> dict[str, DiskImage]:
    """Each node's image from `folder`, checked (one line naming what is wrong)."""
    base = Path(folder)
    manifest = _manifest(base)
    images: dict[str, DiskImage] = {}
    for entry in manifest["nodes"]:
        name, sub, digest = entry.get("name"), entry.get("folder"), entry.get("digest")
        if not (isinstance(name, str) and name and isinstance(sub, str) and sub.isdigit()):
            raise _bad(base / MANIFEST, f"a node entry is malformed: {entry!r:.80}")
        if name in images:
            raise _bad(base / MANIFEST, f"it names node {name!r} twice")
        image = read_image(base / sub)
        if image.digest() != digest:
            raise _bad(base / sub, "its files differ from what the image recorded "
                       "(edited or damaged); save it again")  # fmt: skip
        images[name] = image
    return images


def _manifest(base: Path) -> dict[str, Any]:
    path = base / MANIFEST
    try:
        regular_file(path)
        manifest = safejson.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad(path, "it is missing: this is not a folder of saved disks "
                   "(seedbed run ... --save-disks writes one)") from None  # fmt: skip
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _bad(path, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _bad(path, f"it is not a {FORMAT} manifest")
    if manifest.get("version") != VERSION:
        raise _bad(path, f"it is format version {manifest.get('version')!r}; this seedbed "
                   f"reads version {VERSION}: load it with the seedbed that wrote it")  # fmt: skip
    if not isinstance(manifest.get("nodes"), list):
        raise _bad(path, "its 'nodes' is not a list")
    if not all(isinstance(entry, dict) for entry in manifest["nodes"]):
        raise _bad(path, "its 'nodes' is not a list of objects")
    return manifest


def _bad(path: Path, why: str) -> ImageError:
    return ImageError(f"cannot load the disks from {path}: {why}")
