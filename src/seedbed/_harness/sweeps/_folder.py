"""A results folder holds one sweep of one target, and one sweep writes it at a time.

Two duties, both checked before a seed runs:

- **The lock.** `locked(folder)` takes an exclusive `fcntl.flock` on
  `folder/sweep.lock` without waiting; a second sweep into the same folder is
  refused while the first runs. The lock belongs to the open file, so the
  kernel releases it on any exit of the holder, SIGKILL included: a lock file
  left behind by a killed sweep is stale by construction and is simply locked
  again, with nothing to detect or clean up. `seedbed explore` locks its
  folder the same way (`Holder("search", "explore", "explore.lock")`). A
  folder that cannot be written (read-only, not ours) is refused here, in one
  line naming it, before anything runs.
- **The claim.** `claim(path, header, ...)` decides what happens to a results
  file already there: `--resume` continues it (same target and options),
  `--fresh` moves it aside to the first free `results.N.jsonl` and says so,
  and anything else is refused with the choice spelled out. Results are never
  replaced silently, and a folder never mixes two targets under one header.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core.files import NotRegular, regular_file
from seedbed._harness.sweeps._results import Results, check_resumable, read_results
from seedbed.errors import UsageError

LOCK_NAME = "sweep.lock"


@dataclass(frozen=True)
class Holder:
    """Who locks a folder, for the refusals: what it is, its command, its lock file."""

    noun: str = "sweep"
    command: str = "sweep"
    lock_name: str = LOCK_NAME


SWEEP = Holder()


@contextmanager
def locked(folder: Path, holder: Holder = SWEEP) -> Iterator[None]:
    """Hold the folder's lock for the block; refuse if another writer holds it."""
    path = folder / holder.lock_name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise UsageError(
            f"cannot write in {folder} (creating {path}: {exc.strerror or exc}): "
            f"{holder.command} into a folder you can write, with --out DIR"
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another {holder.noun} is writing {folder} (it holds {path}): wait for it "
                f"to finish, or {holder.command} into another --out folder"
            ) from None
        with contextlib.suppress(OSError):  # for a curious user; the lock is the flock
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)  # releases the flock


@dataclass
class Claim:
    """What the sweep starts from: earlier results to keep, and any file moved aside."""

    previous: Results
    keep_bytes: int | None  # None: start the results file afresh
    moved_to: Path | None = None


def claim(path: Path, header: dict[str, Any], *, resume: bool, fresh: bool) -> Claim:
    """Decide what becomes of the results file at `path` before the sweep writes it."""
    if resume and fresh:
        raise UsageError("--resume continues --out, --fresh moves them aside: pick one")
    if not _holds_anything(path):
        return Claim(Results(), None)
    if fresh:
        aside = _aside(path)
        os.replace(path, aside)
        return Claim(Results(), None, moved_to=aside)
    previous = read_results(path)
    if resume:
        check_resumable(path, previous, header)
        return Claim(previous, previous.whole_bytes)
    raise UsageError(_refusal(path, previous, header))


def _holds_anything(path: Path) -> bool:
    """Whether a results file is there to keep; a non-regular one is refused."""
    try:
        regular_file(path)
    except NotRegular as exc:
        raise UsageError(f"{exc}; sweep into another --out folder") from None
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def _refusal(path: Path, previous: Results, header: dict[str, Any]) -> str:
    """Name what the folder holds and the three ways on."""
    held = previous.headers[-1].get("target") if previous.headers else None
    count = len(previous.seeds)
    if held != header["target"]:
        return (
            f"{path} holds {count} seeds of {json.dumps(held)}, not {json.dumps(header['target'])}:"
            " one results folder holds one target; sweep into another --out folder, or pass"
            " --fresh to move those results aside"
        )
    return (
        f"{path} already holds {count} seeds of this target: pass --resume to continue it, "
        "--fresh to move it aside and start again, or another --out folder"
    )


def _aside(path: Path) -> Path:
    """The first `results.N.jsonl` beside `path` not yet taken."""
    number = 1
    while True:
        candidate = path.with_name(f"{path.stem}.{number}{path.suffix}")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
        number += 1
