"""One target's saved failures: `.seedbed/failures/TARGET/`, one JSON file each.

    seed-7.json            a seed record: the seed, the run options it failed
    seed-7-1a2b3c4d.json   under (named by their digest when not the defaults),
                           what failed and the command that replays it
    choices-9f8e....json   a choice file (`seedbed run TARGET --choices FILE`
                           replays it), from a search; its "failure" object
                           carries the replay command and who found it

A seed record:

    {"kind": "seedbed failure", "version": 1, "target": "pkg.mod:name",
     "seed": 7, "options": {"max_time": 30.0}, "found_by": "sweep",
     "failure": {"error_type": "...", "bucket": "...", "message": "..."},
     "replay": "seedbed run pkg.mod:name --seed 7"}

Why one file per failure: concurrent sweeps of one target each write only
whole files, through a temporary file of their own (named by process id and
a counter, never shared) renamed into place, so a reader sees an entry
complete or not at all and two writers of one entry leave one of their two
identical files. Dropping an entry is an `unlink` that tolerates losing the
race. Files whose names start with "." are writers' temporaries and are not
entries. Reading refuses, in one line naming the file and the way out, an
entry that is not a regular file (a symlink, FIFO or folder) or whose JSON
is damaged: a database that lies is worse than none. Never pickled.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core.files import NotRegular, open_regular, replaceable
from seedbed._core.safejson import BadJSON, loads
from seedbed._harness.shrink._file import RUN_OPTIONS, ChoiceFile, choices_text, read_choices
from seedbed.errors import UsageError

ROOT = Path(".seedbed") / "failures"
KIND, VERSION = "seedbed failure", 1
MAX_SAVED = 100  # entries kept per target: each is replayed before every sweep
MAX_RECORD = 1 << 16  # bytes of a seed record; seedbed writes well under 2 KB
FOUND_BY = ("sweep", "explore", "pytest")
_ENTRY = re.compile(r"^(seed-\d+(-[0-9a-f]{8})?|choices-[0-9a-f]{16})\.json$")
_temporaries = itertools.count()


def slug(target: str) -> str:
    """A target's folder name (as a sweep's results folder is named)."""
    return re.sub(r"[^\w.-]+", "-", target).strip("-") or "-"


def normalized(options: dict[str, Any]) -> dict[str, Any]:
    """Run options as a run takes them: unset and off values left out, keys sorted."""
    return {key: options[key] for key in sorted(options) if options[key] not in (None, False)}


@dataclass(frozen=True)
class Entry:
    """One saved failure, as read back (checked) from its file."""

    path: Path
    target: str
    seed: int
    options: dict[str, Any]
    found_by: str
    failure: dict[str, Any] | None
    replay: str
    choices: bool  # a choice file: its draws replace the seed's fresh ones

    @property
    def name(self) -> str:
        return self.path.name

    def describe(self) -> str:
        """'seed 7' or 'seed 7 (choices-....json)', for reports."""
        return f"seed {self.seed}" + (f" ({self.name})" if self.choices else "")

    def bucket(self) -> str:
        failure = self.failure or {}
        return str(failure.get("bucket") or failure.get("error_type") or "a failure")


class FailureDB:
    """The saved failures of one target, under `root` (`.seedbed/failures` by default)."""

    def __init__(self, target: str, root: Path | None = None) -> None:
        self.target = target
        self.folder = (ROOT if root is None else root) / slug(target)

    def entries(self) -> list[Entry]:
        """Every entry, seed records first then choice files, each by seed then
        name; a damaged entry is a one-line `UsageError` naming it."""
        found = [self._read(path) for path in self._paths()]
        mine = [entry for entry in found if entry is not None and entry.target == self.target]
        return sorted(mine, key=lambda e: (e.choices, e.seed, e.name))

    def matching(self, options: dict[str, Any]) -> tuple[list[Entry], int]:
        """The entries saved under these run options, and how many others there are
        (a seed means its run options too: another option set is another run)."""
        wanted = normalized(options)
        entries = self.entries()
        same = [e for e in entries if _same_options(e, wanted)]
        return same, len(entries) - len(same)

    def save_seed(self, seed: int, options: dict[str, Any], found_by: str,
                  failure: dict[str, Any] | None, replay: str) -> Path | None:  # fmt: skip
        """Save a failing seed (replacing its entry if there); None when the target
        already keeps `MAX_SAVED` entries."""
        given = normalized(options)
        suffix = f"-{_digest(given)[:8]}" if given else ""
        path = self.folder / f"seed-{seed}{suffix}.json"
        if not path.exists() and self._full():
            return None
        record = {"kind": KIND, "version": VERSION, "target": self.target, "seed": seed,
                  "options": given, "found_by": found_by, "failure": _failure(failure),
                  "replay": replay}  # fmt: skip
        _write(path, (json.dumps(record, indent=1, sort_keys=False) + "\n").encode())
        return path

    def save_choices(self, saved: ChoiceFile, found_by: str, runner: str) -> Path | None:
        """Save a failing run's choice file; None when the target keeps `MAX_SAVED`."""
        body = json.dumps([saved.seed, saved.options, [[c.stream, c.reason, c.value]
                                                       for c in saved.choices]])  # fmt: skip
        path = self.folder / f"choices-{_digest(body)}.json"
        if not path.exists() and self._full():
            return None
        replay = f"{runner} run {self.target} --choices {path}"
        failure = {**_failure(saved.failure), "found_by": found_by, "replay": replay}
        text = choices_text(ChoiceFile(self.target, saved.seed, saved.choices,
                                       saved.options, failure))  # fmt: skip
        _write(path, text.encode("utf-8"))
        return path

    def drop(self, entry: Entry) -> None:
        """Remove an entry (it passes now); another process removing it first is fine."""
        entry.path.unlink(missing_ok=True)

    def clear(self) -> int:
        """Remove every entry of this target (damaged ones too); how many went."""
        paths = self._paths()
        for path in paths:
            path.unlink(missing_ok=True)
        return len(paths)

    def _paths(self) -> list[Path]:
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise UsageError(f"cannot read {self.folder}: {exc.strerror or exc}") from None
        return [self.folder / name for name in names if _ENTRY.match(name)]

    def _full(self) -> bool:
        return len(self._paths()) >= MAX_SAVED

    def _read(self, path: Path) -> Entry | None:
        """The entry at `path`; None if another process dropped it since the listing."""
        advice = f"remove it, or clear them all with: seedbed failures {self.target} --clear"
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(mode):
            raise UsageError(f"saved failure {path} is not a regular file; {advice}")
        if path.name.startswith("choices-"):
            return self._read_choices(path, advice)
        try:
            with open_regular(path) as handle:
                raw = handle.read(MAX_RECORD + 1)
            if len(raw) > MAX_RECORD:
                raise BadJSON(f"larger than {MAX_RECORD} bytes")
            return _record(path, loads(raw.decode("utf-8"), allow_nan=False))
        except (BadJSON, NotRegular) as exc:
            raise UsageError(f"saved failure {path}: {exc}; {advice}") from None
        except UnicodeDecodeError:
            raise UsageError(f"saved failure {path} is not UTF-8 text; {advice}") from None
        except FileNotFoundError:
            return None  # dropped by another process between the check and the open
        except OSError as exc:
            raise UsageError(f"cannot read saved failure {path}: {exc.strerror or exc}") from None

    def _read_choices(self, path: Path, advice: str) -> Entry | None:
        try:
            saved = read_choices(path, self.target)
        except UsageError as exc:
            if not os.path.lexists(path):
                return None  # dropped by another process meanwhile
            raise UsageError(f"saved failure {exc}; {advice}") from None
        failure = saved.failure or {}
        replay, found_by = failure.get("replay"), failure.get("found_by")
        if not isinstance(replay, str) or found_by not in FOUND_BY:
            raise UsageError(f"saved failure {path} names no replay command or finder; {advice}")
        return Entry(path, self.target, saved.seed, normalized(saved.options), str(found_by),
                     failure, replay, choices=True)  # fmt: skip


def saved_targets(root: Path | None = None) -> list[tuple[str, int]]:
    """Each folder of the database and how many entries it holds, by name."""
    base = ROOT if root is None else root
    try:
        names = sorted(os.listdir(base))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UsageError(f"cannot read {base}: {exc.strerror or exc}") from None
    counted = []
    for name in names:
        folder = base / name
        if folder.is_dir() and not folder.is_symlink():
            count = sum(1 for entry in sorted(os.listdir(folder)) if _ENTRY.match(entry))
            if count:
                counted.append((name, count))
    return counted


def _same_options(entry: Entry, wanted: dict[str, Any]) -> bool:
    if not entry.choices:
        return entry.options == wanted
    # A choice file keeps the run options a run takes (`--faults` is in its draws).
    return entry.options == {k: v for k, v in wanted.items() if k in RUN_OPTIONS}


def _record(path: Path, document: Any) -> Entry:
    """A seed record's fields, each checked; a defect is a `BadJSON` saying which."""
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise BadJSON(f'not a saved failure (no "kind": {KIND!r})')
    if document.get("version") != VERSION:
        raise BadJSON(f"version {document.get('version')!r}; this seedbed reads {VERSION}")
    seed = document.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BadJSON(f'"seed" must be a non-negative integer, got {seed!r:.40}')
    checks = (("target", str), ("options", dict), ("replay", str), ("found_by", str))
    for key, kind in checks:
        if not isinstance(document.get(key), kind):
            raise BadJSON(f'"{key}" must be a {kind.__name__}, got {document.get(key)!r:.40}')
    if document["found_by"] not in FOUND_BY:
        raise BadJSON(f'"found_by" must be one of {", ".join(FOUND_BY)}')
    failure = document.get("failure")
    if failure is not None and not isinstance(failure, dict):
        raise BadJSON('"failure" must be an object or null')
    return Entry(path, document["target"], seed, normalized(document["options"]),
                 document["found_by"], failure, document["replay"], choices=False)  # fmt: skip


def _failure(failure: dict[str, Any] | None) -> dict[str, Any]:
    """What a report shows of a failure: its kind, bucket and message (no traceback)."""
    keys = ("error_type", "bucket", "message")
    return {key: (failure or {}).get(key) for key in keys}


def _digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _write(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file only this writer uses,
    renamed into place; refuses (`NotRegular`) a symlink, FIFO or folder at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replaceable(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{next(_temporaries)}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
