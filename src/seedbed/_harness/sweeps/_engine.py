"""A whole sweep: resume, the worker pool, the results file, the display, stops.

The order of duties per seed is fixed: the record is appended to the results
file first, then shown. So Ctrl-C, SIGTERM or SIGKILL at any moment loses no
seed the sweep has reported, and the summary, printed at the end and on
Ctrl-C or SIGTERM, is read back from the file: it shows what is on disk.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import click

from seedbed._core.printable import terminal
from seedbed._core.version import VERSION as SEEDBED_VERSION
from seedbed._harness.failures._db import FailureDB
from seedbed._harness.failures._replay import (
    Saved,
    kept_lines,
    replay_on_own_pool,
    replay_saved,
    saved_lines,
)
from seedbed._harness.sweeps._command import resume_command, runner_prefix
from seedbed._harness.sweeps._dask import DaskPool
from seedbed._harness.sweeps._declared import declared
from seedbed._harness.sweeps._display import LiveProgress, recheck_lines, summary_lines
from seedbed._harness.sweeps._folder import claim, locked
from seedbed._harness.sweeps._pool import WorkerPool
from seedbed._harness.sweeps._recheck import DEFAULT_SHARE, Rechecks
from seedbed._harness.sweeps._record import FAILED
from seedbed._harness.sweeps._results import VERSION, Results, ResultsWriter, read_results
from seedbed._harness.sweeps._summary import Summary, summarize
from seedbed.errors import UsageError

Record = dict[str, Any]
EXIT_INTERRUPTED = {"Ctrl-C": 130, "SIGTERM": 143}


@dataclass
class SweepSpec:
    """Everything `seedbed sweep` was asked to do."""

    target: str
    first: int
    count: int
    jobs: int
    out: Path
    options: dict[str, Any] = field(default_factory=dict)  # run options, as in the header
    resume: bool = False
    fresh: bool = False  # move results already in `out` aside instead of refusing
    seed_timeout: float = 300.0
    as_json: bool = False
    traceback: bool = False
    require_sometimes: bool = False
    argv: list[str] = field(default_factory=list)  # to print the command that resumes
    scheduler: str | None = None  # a Dask scheduler (tcp://HOST:PORT or local:N): run there
    max_failures: int | None = None  # stop once this run found this many failing seeds
    recheck: int = DEFAULT_SHARE  # run 1 seed in this many twice in its worker; 0: never
    saved: bool = True  # replay the target's saved failures first; save the new ones

    @property
    def seeds(self) -> range:
        return range(self.first, self.first + self.count)

    @property
    def results_path(self) -> Path:
        return self.out / "results.jsonl"


def default_out(target: str) -> Path:
    """Where a sweep of `target` keeps its results unless told: found again by --resume."""
    return Path(".seedbed") / "sweeps" / re.sub(r"[^\w.-]+", "-", target).strip("-")


def default_jobs() -> int:
    """One worker per core this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class _Stopped(BaseException):
    """SIGTERM (or SIGHUP) arrived: stop like Ctrl-C, with the summary."""


class _EnoughFailures(Exception):
    """`--max-failures N` (or `-x`) reached: stop the workers, keep the results."""


@contextmanager
def _stop_on_terminate() -> Iterator[None]:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Stopped(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    # Ctrl-C stops the sweep with its summary even where SIGINT arrived ignored
    # (a shell starts background jobs that way): the sweep is built to stop cleanly.
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _header(spec: SweepSpec) -> Record:
    return {
        "kind": "header", "version": VERSION, "target": spec.target,
        "first": spec.first, "seeds": spec.count, "options": spec.options,
        "seedbed": SEEDBED_VERSION, "python": platform.python_version(),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }  # fmt: skip


def _open_results(spec: SweepSpec, header: Record) -> tuple[Results, ResultsWriter]:
    path = spec.results_path
    claimed = claim(path, header, resume=spec.resume, fresh=spec.fresh)
    if claimed.moved_to is not None:
        _say(f"--fresh: moved the earlier results to {claimed.moved_to}", err=True)
    writer = ResultsWriter(path, keep_bytes=claimed.keep_bytes)
    try:
        writer.append(header)
    except OSError as exc:  # a full disk before the first seed
        writer.close()
        why = f"cannot write {path} ({exc.strerror or exc})"
        if claimed.keep_bytes is not None:  # resuming: the earlier seeds are still there
            raise UsageError(
                f"{why}; every seed before is kept: make room, then continue with: "
                f"{_resume_command(spec)}"
            ) from None
        path.unlink(missing_ok=True)  # an empty results file would only be refused later
        raise UsageError(f"{why}; nothing was run: make room, then run: {_command(spec)}") from None
    return claimed.previous, writer


def run_sweep(spec: SweepSpec) -> int:
    """Run (or resume) a sweep; print progress and the summary; return the exit code.

    The results folder is locked for the whole sweep (one writer at a time).
    A `UsageError` (the target does not import, a damaged results file, a
    folder holding other results or locked by another sweep) propagates
    after the workers are stopped.
    """
    with locked(spec.out):
        return _locked_sweep(spec)


def _locked_sweep(spec: SweepSpec) -> int:
    header = _header(spec)
    saved = Saved(FailureDB(spec.target)) if spec.saved else None
    if saved is not None:
        saved.load(spec.options)  # a damaged entry is refused before the results file is
    previous, writer = _open_results(spec, header)
    finished = {seed for seed in previous.seeds if seed in spec.seeds}
    todo = [seed for seed in spec.seeds if seed not in finished]
    failed = sum(1 for seed in finished if previous.seeds[seed]["status"] != "pass")
    settings = {"target": spec.target, "options": spec.options, "runner": runner_prefix()}
    pool: WorkerPool | DaskPool | None = None
    stopped: str | None = None
    progress = LiveProgress(spec.count, len(finished), failed)
    found_before = failed  # --max-failures counts the failures this run finds

    share = spec.recheck if spec.scheduler is None else 0  # Dask: no worker to pin it to
    rechecks = Rechecks(settings, spec.seeds, share, spec.out / "rechecks", spec.seed_timeout)

    def write(record: Record) -> None:
        try:
            writer.append(record)  # on disk before anyone hears of it
        except OSError as exc:  # a full disk, a quota: the seeds before it are safe
            raise UsageError(
                f"cannot write {spec.results_path} ({exc.strerror or exc}); every seed before "
                f"this one is kept: make room, then continue with: {_resume_command(spec)}"
            ) from None

    def on_record(record: Record) -> None:
        if record.get("recheck") is True:  # the rerun's worker died or timed out
            record = rechecks.lost_rerun(record)
        if record.get("kind") == "recheck":
            for line in rechecks.answered(record):
                write(line)
                if line.get("kind") == "seed" and line.get("first_status") == "pass":
                    progress.failed_again(line)
        else:
            write(record)
            rechecks.ran(record)
            progress.seed_done(record)
            if saved is not None and record.get("status") in FAILED:
                saved.save(int(record["seed"]), spec.options, "sweep", record)
        if spec.max_failures is not None and progress.failed - found_before >= spec.max_failures:
            raise _EnoughFailures(_enough(spec.max_failures))

    try:
        with _stop_on_terminate():
            pool = _pool(spec, settings, len(todo))  # reaching a Dask cluster may take seconds
            if saved is not None:  # before any fresh seed, by the same workers
                _replay(spec, saved, settings, pool)
            with progress:
                if isinstance(pool, WorkerPool):
                    pool.run(({"seed": seed} for seed in todo), on_record, progress.tick,
                             rechecks.follow_up, rechecks.gap)  # fmt: skip
                else:
                    pool.run(({"seed": seed} for seed in todo), on_record, progress.tick)
    except KeyboardInterrupt:
        stopped = "Ctrl-C"
    except _Stopped as stop:
        stopped = "SIGTERM" if str(stop) == "SIGTERM" else str(stop)
    except _EnoughFailures as enough:
        stopped = str(enough)
    finally:
        with _signals_ignored():
            if pool is not None:
                pool.close()
            writer.close()
    return _finish(spec, progress, stopped, saved)


def _pool(spec: SweepSpec, settings: Record, todo: int) -> WorkerPool | DaskPool:
    """The local worker processes, or a Dask cluster when `--scheduler` names one."""
    if spec.scheduler is None:
        jobs = min(spec.jobs, max(1, todo))
        return WorkerPool(settings, jobs, spec.out / "logs", spec.seed_timeout)
    pool = DaskPool(spec.scheduler, settings, spec.seed_timeout)
    spec.jobs = pool.threads  # for the summary: seeds the cluster runs at once
    return pool


def _replay(spec: SweepSpec, saved: Saved, settings: Record, pool: WorkerPool | DaskPool) -> None:
    """The saved failures first: on the sweep's workers, or (on Dask, whose
    workers take only seeds) on a local pool of their own."""
    if not saved.pending:
        return
    if isinstance(pool, WorkerPool):
        replay_saved(saved, lambda requests, on_record: pool.run(requests, on_record))
        return
    replay_on_own_pool(saved, settings, spec.jobs, spec.out / "logs", spec.seed_timeout)


@contextmanager
def _signals_ignored() -> Iterator[None]:
    """While the workers are stopped and the file closed, a second Ctrl-C waits."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _finish(spec: SweepSpec, progress: LiveProgress, stopped: str | None,
            saved: Saved | None = None) -> int:  # fmt: skip
    results = read_results(spec.results_path)
    records = [r for s, r in results.seeds.items() if s in spec.seeds]
    rechecks = [r for s, r in results.rechecks.items() if s in spec.seeds]
    summary = summarize(records, declared(spec.target), rechecks)
    lines = saved_lines(saved) if saved is not None else []
    lines += _headline(spec, summary, progress, stopped)
    lines += summary_lines(summary, traceback=spec.traceback)
    lines += recheck_lines(summary, spec.recheck, on_dask=spec.scheduler is not None)
    if spec.require_sometimes and summary.never_true:
        lines.append(f"--require-sometimes: {len(summary.never_true)} never true, a failure")
    lines += kept_lines(saved) if saved is not None else []
    lines.append(f"results: {spec.results_path}")
    if stopped:
        lines.append(f"continue it with: {_resume_command(spec)}")
    for line in lines:
        _say(line, err=spec.as_json)
    if spec.as_json:
        told = _json_summary(spec, summary, progress, stopped)
        told["saved"] = saved.as_json() if saved is not None else None
        _say(json.dumps(told, sort_keys=True))
    if stopped in EXIT_INTERRUPTED:
        return EXIT_INTERRUPTED[stopped]
    if stopped and spec.max_failures is not None and stopped == _enough(spec.max_failures):
        return 1  # it stopped because seeds failed: that is the sweep's answer
    if stopped:
        return 129
    unmet = spec.require_sometimes and summary.never_true
    still = saved is not None and saved.still_failing
    return 1 if summary.failed or unmet or still else 0


def _say(line: str, *, err: bool = False) -> None:
    """Print a line; buckets, messages and tracebacks are the program's text, escaped."""
    click.echo(terminal(line), err=err)  # noqa: TID251 (as `seedbed.cli._guard.echo` does)


def _enough(limit: int) -> str:
    return "its first failure" if limit == 1 else f"--max-failures {limit}"


def _headline(
    spec: SweepSpec, summary: Summary, progress: LiveProgress, stopped: str | None
) -> list[str]:
    speed = f"{progress.ran} run in {progress.elapsed():.1f} s, {progress.rate():.1f} seeds/s"
    jobs = f"{spec.jobs} {'Dask ' if spec.scheduler else ''}worker{'s' if spec.jobs != 1 else ''}"
    head = f"{summary.seeds} seeds"
    if stopped:
        head = f"stopped by {stopped} after {summary.seeds} of {spec.count} seeds"
    if not summary.failed:
        return [f"{head}, no failures ({speed}, {jobs})"]
    return [f"{head}: {summary.passed} passed, {summary.failed} failed ({speed}, {jobs})"]


def _command(spec: SweepSpec) -> str:
    """The command that started this sweep."""
    return f"{runner_prefix()} {shlex.join(spec.argv or ['sweep', spec.target])}"


def _resume_command(spec: SweepSpec) -> str:
    return resume_command(spec.argv, ["sweep", spec.target])


def _json_summary(
    spec: SweepSpec, summary: Summary, progress: LiveProgress, stopped: str | None
) -> Record:
    return {
        **summary.as_json(),
        "target": spec.target,
        "requested": spec.count,
        "first": spec.first,
        "jobs": spec.jobs,
        "results": str(spec.results_path),
        "seeds_per_second": round(progress.rate(), 3),
        "stopped": stopped,
    }


def argv() -> list[str]:
    """The command's own arguments, as typed (for the resume hint)."""
    return sys.argv[1:]
