"""How a sweep looks: live progress while it runs, the summary when it stops.

On an interactive terminal a rich progress bar (seeds done, seeds per second,
failures so far, time left); otherwise (piped, CI) a plain status line every
few seconds, since rich shows nothing until the end when its output is not a
terminal. Each new kind of failure is announced once, as it is found. The
summary is plain text either way.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from seedbed._core.printable import terminal
from seedbed._harness.sweeps._record import FAILED, record_identity
from seedbed._harness.sweeps._summary import Summary
from seedbed.errors import view_command

Record = dict[str, Any]
_STATUS_EVERY = 5.0  # seconds between plain status lines


class LiveProgress:
    """Progress of one sweep on stderr; `seed_done` after each record is on disk."""

    def __init__(self, total: int, done: int, failed: int, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.interactive = self.console.is_interactive
        self.total, self.done, self.failed = total, done, failed
        self.ran = 0  # seeds finished by this run of the sweep (for seeds/s)
        self.started = time.monotonic()  # display only
        self._first_finished: float | None = None  # when this run's first seed finished
        self._last_status = self.started
        self._buckets: set[str] = set()
        self._bar = Progress(
            TextColumn("sweeping"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TextColumn("[red]{task.fields[failed]} failed"),
            TimeRemainingColumn(), console=self.console, disable=not self.interactive,
        )  # fmt: skip
        self._task = self._bar.add_task("sweep", total=total, completed=done, failed=failed,
                                        rate="")  # fmt: skip

    def __enter__(self) -> LiveProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()
        if not self.interactive and exc[0] is None:  # a usage error stays one line
            self._status()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def rate(self) -> float:
        elapsed = self.elapsed()
        return self.ran / elapsed if elapsed > 0 else 0.0

    def finished_rate(self) -> float | None:
        """Seeds per second between the first seed this run finished and now, once
        two have: a cluster's start-up (or a pool's) is not counted, so the time
        left is not inflated while workers ramp up. None until it can be known."""
        if self._first_finished is None or self.ran < 2:
            return None
        spent = time.monotonic() - self._first_finished
        return (self.ran - 1) / spent if spent > 0 else None

    def seed_done(self, record: Record) -> None:
        self.done += 1
        self.ran += 1
        if self._first_finished is None:
            self._first_finished = time.monotonic()
        if record["status"] in FAILED:
            self.failed += 1
            self._announce(record)
        self._bar.update(self._task, completed=self.done, failed=self.failed,
                         rate=f"{self.rate():.1f} seeds/s")  # fmt: skip
        self.tick()

    def failed_again(self, record: Record) -> None:
        """A seed already counted failed on a second look (its recheck differed)."""
        self.failed += 1
        self._announce(record)
        self._bar.update(self._task, completed=self.done, failed=self.failed)

    def tick(self) -> None:
        now = time.monotonic()
        if not self.interactive and now - self._last_status >= _STATUS_EVERY:
            self._status()

    def _status(self) -> None:
        self._last_status = time.monotonic()
        self.console.print(
            f"  {self.done}/{self.total} seeds, {self.failed} failed, "
            f"{self.rate():.1f} seeds/s{_time_left(self)}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )

    def _announce(self, record: Record) -> None:
        bucket = record_identity(record)
        if bucket in self._buckets:
            return
        self._buckets.add(bucket)
        line = terminal(f"new failure, seed {record['seed']}: {bucket}")  # the program's text
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)  # above the bar


def _time_left(progress: LiveProgress) -> str:
    """From finished seeds only; "estimating" until two have finished."""
    rate, left = progress.finished_rate(), progress.total - progress.done
    if left <= 0:
        return ""
    if rate is None:
        return ", estimating time left"
    return f", about {left / rate:.0f} s left"


def summary_lines(summary: Summary, *, traceback: bool) -> list[str]:
    """The failure buckets, fault effectiveness and assertion catalog, as text."""
    lines = []
    if summary.failing_seeds:
        shown = ", ".join(str(seed) for seed in summary.failing_seeds[:20])
        more = summary.failed - 20
        lines.append(f"failing seeds: {shown}" + (f", ... (+{more} more)" if more > 0 else ""))
        lines.append(f"failures by kind ({len(summary.buckets)}):")
        width = len(str(summary.buckets[0].count))
        for bucket in summary.buckets:
            lines.append(f"  {bucket.count:>{width}} x {bucket.name}")
            where = f", at {bucket.location}" if bucket.location else ""
            lines.append(f"  {'':>{width}}   smallest seed {bucket.smallest_seed}{where}")
            if view_command(bucket.replay):
                lines.append(f"  {'':>{width}}   view:   {view_command(bucket.replay)}")
            lines.append(f"  {'':>{width}}   replay: {bucket.replay}")
            if traceback and bucket.traceback:
                lines += ["    " + line for line in bucket.traceback.rstrip().splitlines()]
    lines += _fault_lines(summary) + _assertion_lines(summary)
    return lines


def _fault_lines(summary: Summary) -> list[str]:
    if not summary.faults or not summary.seeds:
        return []
    lines = ["faults (share of seeds where each was injected / had an effect):"]
    width = max(len(kind) for kind in summary.faults)
    for kind, entry in sorted(summary.faults.items()):
        on = 100 * entry["seeds_on"] / summary.seeds
        effective = 100 * entry["seeds_effective"] / summary.seeds
        lines.append(
            f"  {kind:<{width}}  on in {on:.0f}% of seeds, effective in {effective:.0f}% "
            f"({entry['injected']} injected, {entry['effective']} effective)"
        )
    return lines


def _assertion_lines(summary: Summary) -> list[str]:
    if not summary.assertions:
        return []
    lines = [f"assertions ({len(summary.assertions)}):"]
    for message, entry in sorted(summary.assertions.items()):
        where = f" at {entry['location']}" if entry.get("location") else ""
        lines.append(f"  {entry['kind']} {message!r}{where}: {_verdict(entry, summary.seeds)}")
    for message in summary.never_true:
        entry = summary.assertions[message]
        lines.append(f"  never true: {entry['kind']} {message!r}: no seed reached it")
    return lines


def _verdict(entry: dict[str, Any], seeds: int) -> str:
    """How a claim fared: an `always`, invariant or `unreachable` by the seeds that
    broke it; a `sometimes`, `reachable` or liveness property by the seeds it held in."""
    counts = f"({entry['true']} of {entry['evaluated']} evaluations true)"
    kind = entry["kind"]
    if kind in ("always", "invariant", "unreachable"):
        broken = entry.get("seeds_broken", 0)
        if not broken:
            verb = "never reached" if kind == "unreachable" else "held"
            return f"{verb} in all {seeds} seeds {counts}"
        verb = "reached" if kind == "unreachable" else "broke"
        return (f"{verb} in {broken} of {seeds} seeds (first: seed {entry['first_broken_seed']}) "
                f"{counts}")  # fmt: skip
    if not entry["evaluated"]:
        return f"never evaluated in {seeds} seeds (declared in the code)"
    return f"true in {entry['seeds_true']} of {seeds} seeds {counts}"


def recheck_lines(summary: Summary, share: int, *, on_dask: bool = False) -> list[str]:
    """How many seeds the sweep ran twice to check itself, and what it found."""
    if on_dask:
        return ["recheck: not on a Dask cluster (no worker to pin a rerun to): no seed run twice"]
    if share <= 0:
        return ["recheck: off (--recheck 0): no seed was run twice"]
    how = f"1 in {share}, in the worker that ran it, after other seeds"
    if not summary.recheck_differed:
        return [f"rechecked {summary.rechecked} of {summary.seeds} seeds ({how}): each the same"]
    differed = ", ".join(str(seed) for seed in summary.recheck_differed)
    lines = [
        f"rechecked {summary.rechecked} of {summary.seeds} seeds ({how}): "
        f"{len(summary.recheck_differed)} ran differently (seed {differed}): nondeterminism, "
        "a failure"
    ]
    for seed in summary.recheck_differed:
        where = summary.recheck_found.get(seed)
        if where is not None:
            lines.append(f"  seed {seed}: " + where.replace("\n", "\n  "))
    return lines
