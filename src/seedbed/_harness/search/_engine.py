"""Driving a search: batches of plans, run here or on a worker pool, folded in order.

Plans are made a batch (`BATCH` runs) at a time from the corpus as it stood
when the batch began, and results are folded in run order whatever order
they finish in: so `--jobs` never changes what is found. Each run's line is
written as soon as every earlier run's is. With `--runs N` the search is a
function of its seed and N; with a wall-clock `--budget` it stops at the
first batch boundary past the budget (in this process: the first run) and
its log says what it did, so a resumed or repeated search can follow it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._core.choices import Choice
from seedbed._harness.failures._db import FailureDB
from seedbed._harness.failures._replay import Saved, in_process, replay_on_own_pool, replay_saved
from seedbed._harness.search._branches import check_available
from seedbed._harness.search._execute import choices_of, execute
from seedbed._harness.search._plan import BATCH, Candidate, Plan, make_plan
from seedbed._harness.search._recheck import DEFAULT_SHARE, GAP, Rechecker
from seedbed._harness.search._state import State
from seedbed._harness.search._store import CORPUS, FAILURES, Store, header_of, order_of
from seedbed._harness.shrink._file import RUN_OPTIONS, ChoiceFile
from seedbed._harness.shrink._trial import asyncio_log_off
from seedbed._harness.sweeps._command import resume_command
from seedbed._harness.sweeps._folder import Holder, locked
from seedbed._harness.sweeps._pool import WorkerPool
from seedbed._harness.targets import resolve
from seedbed.errors import UsageError

_SEARCH_WORKER = "seedbed._harness.search._worker"
SEARCH = Holder("search", "explore", "explore.lock")  # a search's folder has one writer
Fold = Callable[[Plan, dict[str, Any]], bool]  # fold one run; False: stop the search


@dataclass
class ExploreSpec:
    """What to search: a target, the explorer's seed, and when to stop."""

    target: str
    out: Path
    seed: int = 0
    runs: int | None = None  # a budget counted in runs: the search repeats exactly
    budget: float | None = None  # wall-clock seconds
    jobs: int = 1
    resume: bool = False
    stop_on_failure: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    runner: str = "seedbed"
    seed_timeout: float = 300.0
    scheduler: str | None = None  # a Dask scheduler (tcp://HOST:PORT or local:N): run there
    plain: bool = False  # a plain sweep instead: seeds 0, 1, 2, ... (what a report compares)
    branches: tuple[str, ...] = ()  # packages whose branches are features (3.12+)
    argv: list[str] = field(default_factory=list)  # as typed: to print the command that resumes
    recheck: int = DEFAULT_SHARE  # run 1 plan in this many again after others; 0: never
    saved: bool = True  # replay the target's saved failures first; save the new ones

    def __post_init__(self) -> None:
        if (self.runs is None) == (self.budget is None):
            raise UsageError("explore needs one budget: --runs N or --budget DURATION")


@dataclass
class Search:
    """A search as it ends: its state, the runs it made now, and why it stopped."""

    state: State
    store: Store
    rechecks: Rechecker = field(default_factory=lambda: Rechecker(0))
    saved: Saved | None = None  # the target's failure database (not for a plain sweep)
    ran: int = 0
    resumed: int = 0
    seconds: float = 0.0
    stopped: str = ""


def explore(spec: ExploreSpec, on_line: Callable[[dict[str, Any]], None] = lambda _: None
            ) -> Search:  # fmt: skip
    """Run (or resume) the search `spec` describes; every finished run calls `on_line`.

    The folder is locked for the whole search (one writer at a time, as a
    sweep's is): a second search into it is refused before it reads the log.
    """
    obj = resolve(spec.target)
    check_available(spec.branches)  # after the target: its folder is importable now
    if spec.scheduler is not None:
        from seedbed._harness.sweeps._dask import check_address

        check_address(spec.scheduler)  # before the folder is written
    with locked(spec.out, SEARCH):
        search, snapshot = replayed(spec)
        if spec.saved and not spec.plain:
            search.saved = Saved(FailureDB(spec.target))
            search.saved.load(spec.options)  # a damaged entry is refused before the log is
        store = search.store
        try:
            with _writing(spec):
                store.start()
            if search.saved is not None:  # before any run of the search
                _replay(spec, obj, search.saved)
            _run(spec, obj, search, snapshot, on_line)
        finally:
            store.close()
    return search


def _replay(spec: ExploreSpec, obj: Any, saved: Saved) -> None:
    """The saved failures first: in worker processes when the search has them
    (the sweep's worker answers a saved failure), else here, as its runs."""
    settings = {"target": spec.target, "options": spec.options, "runner": spec.runner}
    if not saved.pending:
        return
    if spec.jobs == 1 and spec.scheduler is None:
        with asyncio_log_off():
            replay_saved(saved, in_process(obj, settings))
        return
    replay_on_own_pool(saved, settings, spec.jobs, spec.out / "logs", spec.seed_timeout)


def replayed(spec: ExploreSpec) -> tuple[Search, list[Candidate]]:
    """What a search starts from: with `--resume`, the state its log holds and the
    corpus its next batch plans from (every line and corpus file read and checked:
    a damaged one is a one-line `UsageError`); else an empty state. Takes no lock
    and writes nothing: `explore` calls it holding the folder's lock."""
    header = header_of(spec.target, spec.seed, spec.options, spec.plain, spec.branches)
    store = Store(spec.out, header, spec.resume)
    # Dask has no worker to pin a rerun to: a search there does not recheck.
    search = Search(State(), store, Rechecker(spec.recheck if spec.scheduler is None else 0))
    return search, _replay_log(spec, search)


def _run(spec: ExploreSpec, obj: Any, search: Search, snapshot: list[Candidate],
         on_line: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
    started = time.monotonic()  # the harness's wall clock, outside every run
    try:
        with asyncio_log_off():
            _search(spec, obj, search, snapshot, started, on_line)
    finally:
        search.seconds = time.monotonic() - started
        if search.stopped:  # not when interrupted: the log then ends at its last run
            with _writing(spec):
                search.store.append(stop_line(spec, search))


@contextmanager
def _writing(spec: ExploreSpec) -> Iterator[None]:
    """A write to the folder that fails (a full disk, a quota, a read-only folder, a
    symlink where a corpus file goes) is one line: the file, why, and how to go on."""
    try:
        yield
    except OSError as exc:
        where = exc.filename or spec.out
        why = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
        again = resume_command(spec.argv, ["explore", spec.target, "--out", str(spec.out)])
        raise UsageError(
            f"cannot write {where} ({why}); every run before this one is kept: make room "
            f"(or fix the folder), then continue with: {again}"
        ) from None


def stop_line(spec: ExploreSpec, search: Search) -> dict[str, Any]:
    """What a search did, as its log's last line: with a wall-clock budget, the
    runs it got to (a search with `--runs` of that many repeats it exactly)."""
    budget = {"runs": spec.runs} if spec.runs is not None else {"seconds": spec.budget}
    return {"kind": "stop", "stopped": search.stopped, "runs": search.state.runs,
            "ran": search.ran, "seconds": round(search.seconds, 3), "budget": budget}  # fmt: skip


def _replay_log(spec: ExploreSpec, search: Search) -> list[Candidate]:
    """Fold the lines of an earlier search back in; the corpus at the last batch's start."""
    state, store = search.state, search.store
    snapshot: list[Candidate] = []
    for line in store.lines():
        if line.get("kind") != "run":
            continue  # an earlier session's stop line (its runs are the lines before)
        index = state.runs
        if index % BATCH == 0:
            snapshot = state.candidates()
        plan = _plan_of(spec, index, snapshot)
        if line.get("index") != index or line.get("plan") != plan.to_json():
            raise UsageError(
                f"--resume: run {index} in {store.log} is not the run this search makes "
                "there (another seedbed, or an edited log); start afresh"
            )
        chosen = store.stored(index, line.get("order") or []) if line.get("entry") else None
        if chosen is not None:
            chosen.load()  # its file is read (and checked) now, before anything runs
        state.apply(line, chosen)
    search.resumed = state.runs
    if state.runs % BATCH == 0:
        snapshot = state.candidates()
    return snapshot


def _search(spec: ExploreSpec, obj: Any, search: Search, snapshot: list[Candidate],
            started: float, on_line: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
    state = search.state
    pool = _pool(spec) if spec.jobs > 1 or spec.scheduler else None
    try:
        while True:
            why = _why_stop(spec, search, started)
            if why:
                search.stopped = why
                return
            start = state.runs
            if start % BATCH == 0:
                snapshot = state.candidates()
            end = start - start % BATCH + BATCH
            if spec.runs is not None:
                end = min(end, spec.runs)
            plans = [_plan_of(spec, i, snapshot) for i in range(start, end)]
            fold = _folder(spec, search, on_line)
            if pool is None:
                _run_here(spec, obj, plans, snapshot, started, fold, search)
            else:
                _run_pooled(pool, plans, snapshot, fold, search)
            if search.stopped:
                return
    finally:
        if pool is not None:
            pool.close()


def _plan_of(spec: ExploreSpec, index: int, snapshot: list[Candidate]) -> Plan:
    """Run `index`'s plan; in a plain sweep, seed `index` as `seedbed sweep` runs it."""
    if spec.plain:
        return Plan(index, index, "fresh")
    return make_plan(spec.seed, index, snapshot, index - index % BATCH)


def _folder(spec: ExploreSpec, search: Search, on_line: Callable[[dict[str, Any]], None]
            ) -> Fold:  # fmt: skip
    def fold(plan: Plan, result: dict[str, Any]) -> bool:
        """Fold one run; False once the search should stop."""
        if search.stopped:
            return False
        _fold(spec, search, plan, result, on_line)
        if spec.stop_on_failure and search.state.buckets:
            search.stopped = "a run failed"
        return not search.stopped

    return fold


def _why_stop(spec: ExploreSpec, search: Search, started: float) -> str:
    if spec.runs is not None and search.state.runs >= spec.runs:
        return f"{spec.runs} runs done"
    if spec.budget is not None and time.monotonic() - started >= spec.budget:
        return f"budget of {spec.budget:g}s spent"
    if spec.stop_on_failure and search.state.buckets:
        return "a run failed"
    return ""


def _source(plan: Plan, snapshot: list[Candidate]) -> list[Choice] | None:
    """The choices a branch replays: its parent's, read from disk if not in memory."""
    return None if plan.parent is None else list(snapshot[plan.parent].choices)


def _run_here(spec: ExploreSpec, obj: Any, plans: list[Plan], snapshot: list[Candidate],
              started: float, fold: Fold, search: Search) -> None:  # fmt: skip
    """Run the batch in this process; its chosen plans again at its end (see `_recheck`)."""
    firsts: list[tuple[Plan, dict[str, Any]]] = []
    for plan in plans:
        if spec.budget is not None and time.monotonic() - started >= spec.budget:
            break
        result = execute(obj, plan, _source(plan, snapshot), spec.options, spec.branches)
        if search.rechecks.wants(plan):
            firsts.append((plan, result))
        if not fold(plan, result):
            break
    for plan, first in firsts:
        again = execute(obj, plan, _source(plan, snapshot), spec.options, spec.branches)
        search.rechecks.compare(plan, first, again)


def _fold(spec: ExploreSpec, search: Search, plan: Plan, result: dict[str, Any],
          on_line: Callable[[dict[str, Any]], None]) -> None:  # fmt: skip
    state, store = search.state, search.store
    line = state.line_of(plan, result)
    chosen = choices_of(result["choices"])
    kept = state.keeps(line)
    with _writing(spec):
        if kept:
            line["entry"] = store.write_choices(CORPUS, plan.index, plan.seed, chosen, None)
            line["order"] = order_of(chosen)
        if state.new_bucket(line) and chosen:
            path = store.write_choices(FAILURES, plan.index, plan.seed, chosen, result["failure"])
            line["failure_file"] = path
            line["replay"] = f"{spec.runner} run {spec.target} --choices {path}"
            if search.saved is not None:
                options = {k: v for k, v in spec.options.items() if k in RUN_OPTIONS}
                failed = ChoiceFile(spec.target, plan.seed, chosen, options, result["failure"])
                search.saved.save_run(failed, spec.runner)
        store.append(line)
    stored = None
    if kept:
        store.cache.put(plan.index, chosen)  # a new entry is followed up next
        stored = store.stored(plan.index, line["order"])
    state.apply(line, stored)
    search.ran += 1
    on_line(line)


# -- the worker pool ----------------------------------------------------------


def _pool(spec: ExploreSpec) -> Any:
    """The sweep's local worker pool, or its Dask pool: either answers plans the same."""
    settings = {"runner": spec.runner, "target": spec.target, "options": spec.options,
                "branches": list(spec.branches)}  # fmt: skip
    if spec.scheduler is not None:
        from seedbed._harness.sweeps._dask import DaskPool

        return DaskPool(spec.scheduler, settings, spec.seed_timeout, worker=_SEARCH_WORKER)
    return WorkerPool(settings, spec.jobs, spec.out / "logs", spec.seed_timeout,
                      worker=_SEARCH_WORKER)  # fmt: skip


def _run_pooled(pool: Any, plans: list[Plan], snapshot: list[Candidate], fold: Fold,
                search: Search) -> None:  # fmt: skip
    """Run the batch on the pool, folding each result as soon as every earlier
    run's is folded (so a kill loses only runs not yet folded). A chosen plan
    runs again in the worker that ran it, after others (see `_recheck`)."""
    by_seed = {plan.seed: plan for plan in plans}
    by_index = {plan.index: plan for plan in plans}
    answers: dict[int, dict[str, Any]] = {}
    firsts: dict[int, dict[str, Any]] = {}
    waiting = list(plans)

    def follow_up(record: dict[str, Any]) -> dict[str, Any] | None:
        plan = by_index.get(record.get("index", -1))
        if record.get("kind") == "recheck" or plan is None or not search.rechecks.wants(plan):
            return None
        firsts[plan.index] = record
        return {**requests[plan.index - plans[0].index], "recheck": True}

    def rechecked(record: dict[str, Any]) -> None:
        plan = by_index[int(record["index"])]
        search.rechecks.compare(plan, firsts.pop(plan.index), record)

    def flush() -> None:
        while waiting and waiting[0].index in answers:
            plan = waiting.pop(0)
            fold(plan, answers.pop(plan.index))

    def answered(record: dict[str, Any]) -> None:
        if record.get("kind") == "recheck":
            rechecked(record)
            return
        if record.get("recheck") is True:  # a rerun's worker died or timed out
            plan = by_seed[int(record["seed"])]
            rechecked({"index": plan.index, "status": record["status"], "failure": None})
            return
        if "index" in record:
            answers[int(record["index"])] = record
            flush()
            return
        plan = by_seed[int(record["seed"])]  # a worker died or timed out running it
        failure = {"error_type": record["error_type"], "bucket": record["bucket"],
                   "message": record["message"]}  # fmt: skip
        answers[plan.index] = {"index": plan.index, "seed": plan.seed, "status": record["status"],
                               "failure": failure, "steps": None, "features": [],
                               "declared": [], "extremes": {}, "choices": []}  # fmt: skip
        flush()

    requests = []
    for plan in plans:
        source = _source(plan, snapshot)
        rows = None if source is None else [[c.stream, c.reason, c.value] for c in source]
        requests.append({"seed": plan.seed, "plan": plan.to_json(), "source": rows})
    if isinstance(pool, WorkerPool):
        pool.run(requests, answered, follow_up=follow_up, after=GAP)
    else:
        pool.run(requests, answered)
