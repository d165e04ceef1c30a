"""Replaying a target's saved failures before anything new runs, and saying so.

`seedbed sweep` and `seedbed explore` call `replay_saved` first: each entry
saved under the command's run options runs where the command's own runs
run (a sweep's worker pool, with its wall-clock watchdog: a saved timeout
cannot hang it; a one-job search's own process), an entry that passes is
dropped, one that fails again stays. The
report (`saved_lines`) is apart from the fresh seeds': the fresh summary
counts only the seeds asked for, and the command exits 1 while a saved
failure still fails. Entries saved under other run options are not replayed
(a seed means its options too) but are counted, so nobody thinks them gone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._harness.failures._db import MAX_SAVED, Entry, FailureDB
from seedbed._harness.failures._run import run_entry
from seedbed._harness.shrink._file import ChoiceFile
from seedbed._harness.sweeps._pool import WorkerPool
from seedbed._harness.sweeps._record import FAILED

Record = dict[str, Any]


@dataclass
class Replayed:
    """A saved failure and its record when replayed now."""

    entry: Entry
    record: Record

    @property
    def fails(self) -> bool:
        return self.record.get("status") in FAILED


@dataclass
class Saved:
    """What one command did with its target's saved failures."""

    db: FailureDB
    pending: list[Entry] = field(default_factory=list)  # to replay (`load`)
    replayed: list[Replayed] = field(default_factory=list)
    other_options: int = 0  # entries under other run options, not replayed
    new: list[int] = field(default_factory=list)  # seeds this command saved
    full: int = 0  # failures not saved: the target keeps MAX_SAVED already
    unsaved: str | None = None  # why saving failed (a full disk), if it did

    @property
    def still_failing(self) -> list[Replayed]:
        return [done for done in self.replayed if done.fails]

    def load(self, options: dict[str, Any]) -> None:
        """Read (and check) the entries to replay before anything is written: a
        damaged entry is a one-line `UsageError` while nothing has started."""
        self.pending, self.other_options = self.db.matching(options)

    def save(self, seed: int, options: dict[str, Any], found_by: str, record: Record) -> None:
        """Keep a failure a fresh seed found; a write that fails is told at the end."""
        try:
            path = self.db.save_seed(seed, options, found_by, record, str(record["replay"]))
        except OSError as exc:
            self.unsaved = f"{exc.filename or self.db.folder}: {exc.strerror or exc}"
            return
        if path is None:
            self.full += 1
        else:
            self.new.append(seed)

    def save_run(self, saved: ChoiceFile, runner: str) -> None:
        """Keep a failing run a search found, as a choice file (`save`'s rules)."""
        try:
            path = self.db.save_choices(saved, "explore", runner)
        except OSError as exc:
            self.unsaved = f"{exc.filename or self.db.folder}: {exc.strerror or exc}"
            return
        if path is None:
            self.full += 1
        else:
            self.new.append(saved.seed)

    def as_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.db.folder),
            "replayed": len(self.replayed),
            "still_failing": [done.entry.seed for done in self.still_failing],
            "dropped": [done.entry.seed for done in self.replayed if not done.fails],
            "other_options": self.other_options,
            "new": list(self.new),
        }


# (requests, on_record): runs each request, in a worker pool or in this process
Runner = Callable[[list[Record], Callable[[Record], None]], None]


def replay_saved(saved: Saved, run: Runner) -> None:
    """Replay the entries `saved.load` read (through `run`); drop those that pass."""
    entries = saved.pending
    if not entries:
        return
    by_path = {str(entry.path): entry for entry in entries}
    answers: dict[str, Record] = {}

    def on_record(record: Record) -> None:
        path = record.get("saved")
        if path is None:  # its worker died or timed out: the first unanswered of that seed
            path = next(p for p, e in by_path.items()
                        if e.seed == record["seed"] and p not in answers)  # fmt: skip
        answers[str(path)] = record

    run([_request(entry) for entry in entries], on_record)
    for entry in entries:
        done = Replayed(entry, answers[str(entry.path)])
        saved.replayed.append(done)
        if not done.fails:
            saved.db.drop(entry)  # it passes now: the bug is fixed (or never was ours)


def replay_on_own_pool(saved: Saved, settings: Record, jobs: int, logs: Path,
                       seed_timeout: float) -> None:  # fmt: skip
    """Replay the saved failures on a local worker pool of their own, closed after
    (where no pool of the run's can take them: a search's, a Dask sweep's)."""
    pool = WorkerPool(settings, min(jobs, len(saved.pending)), logs, seed_timeout)
    try:
        replay_saved(saved, lambda requests, on_record: pool.run(requests, on_record))
    finally:
        pool.close()


def in_process(target: Any, settings: Record) -> Runner:
    """A `Runner` that runs each saved failure here, one after another (a search
    with one job runs its own runs so too)."""

    def run(requests: list[Record], on_record: Callable[[Record], None]) -> None:
        for request in requests:
            on_record(run_entry(target, settings, request))

    return run


def _request(entry: Entry) -> Record:
    return {
        "seed": entry.seed,
        "saved": {
            "path": str(entry.path),
            "choices": entry.choices,
            "options": entry.options,
            "replay": entry.replay,
        },
    }


def saved_lines(saved: Saved) -> list[str]:
    """The saved failures' report, apart from the fresh seeds': before the summary."""
    lines: list[str] = []
    if saved.replayed:
        still = len(saved.still_failing)
        passing = len(saved.replayed) - still
        lines.append(
            f"saved failures ({saved.db.folder}): {len(saved.replayed)} replayed first, "
            f"{still} still {'fails' if still == 1 else 'fail'}, "
            f"{passing} {'passes' if passing == 1 else 'pass'} now (dropped)"
        )
        for done in saved.replayed:
            if done.fails:
                lines.append(f"  {done.entry.describe()} still fails: {done.record.get('bucket')}")
                lines.append(f"       replay: {done.entry.replay}")
            else:
                lines.append(f"  {done.entry.describe()} passes now: dropped")
    if saved.other_options:
        lines.append(f"saved failures under other run options, not replayed: {saved.other_options}"
                     f" (seedbed failures {saved.db.target} lists them)")  # fmt: skip
    return lines


def kept_lines(saved: Saved) -> list[str]:
    """What this command added to the database: after the summary."""
    lines = []
    if saved.new:
        count = len(saved.new)
        lines.append(f"saved {count} failure{'s' if count != 1 else ''} to {saved.db.folder}: "
                     "replayed first next time (seedbed failures lists them)")  # fmt: skip
    if saved.full:
        lines.append(f"not saved: {saved.full} more failures (a target keeps at most "
                     f"{MAX_SAVED} saved; seedbed failures --clear makes room)")  # fmt: skip
    if saved.unsaved:
        lines.append(f"could not save failures: {saved.unsaved}")
    return lines
