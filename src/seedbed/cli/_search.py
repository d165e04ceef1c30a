"""`seedbed explore`: coverage-guided search over a target's runs."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from seedbed._harness.explore import explore_options
from seedbed._harness.failures._replay import kept_lines, saved_lines
from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.search._exhaustive import Exhaustive
from seedbed._harness.search._exhaustive import search as exhaustive_search
from seedbed._harness.search._exhaustive import summary_lines as exhaustive_lines
from seedbed._harness.search._log import LOG
from seedbed._harness.search._recheck import DEFAULT_SHARE
from seedbed._harness.search._store import SWEEP
from seedbed._harness.search._summary import summary_lines
from seedbed._harness.sweeps._command import runner_prefix
from seedbed._harness.sweeps._engine import argv
from seedbed._harness.targets import resolve
from seedbed.cli._explore import explore_flags, saved_flag
from seedbed.cli._group import SECONDS, SEED, usage_error
from seedbed.cli._guard import echo
from seedbed.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """'90', '90s', '10m', '1.5h' as seconds; anything else is a `UsageError`."""
    found = _DURATION.match(text)
    seconds = float(found.group(1)) * _UNIT[found.group(2)] if found else 0.0
    if seconds <= 0:
        raise UsageError(f"--budget {text!r}: give a duration above 0 like 90s, 10m or 1h")
    return seconds


def versus(spec: ExploreSpec, runs: int) -> ExploreSpec:
    """A plain sweep of `runs` runs beside the search: seeds 0, 1, ... with their features."""
    out = spec.out / SWEEP
    return replace(spec, out=out, runs=runs, budget=None, plain=True, stop_on_failure=False,
                   resume=(out / LOG).exists())  # fmt: skip


def default_out(target: str) -> Path:
    return Path(".seedbed") / "explore" / re.sub(r"[^\w.-]+", "-", target).strip("-")


@click.command(name="explore")
@click.argument("target")
@click.option("--runs", type=click.IntRange(min=1), default=None,
              help="how many runs: the search then repeats exactly, given --seed")  # fmt: skip
@click.option("--budget", default=None, metavar="DURATION",
              help="wall-clock budget instead of --runs: 90s, 10m, 1h")  # fmt: skip
@click.option("--seed", type=SEED, default=0, show_default=True, help="the explorer's own seed")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="worker processes (the results do not depend on it)")  # fmt: skip
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="folder for the log, corpus and failures, written by one search at a time  "
    "[default: .seedbed/explore/TARGET]",
)
@click.option("--resume", is_flag=True, help="continue the search in --out")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="run on a Dask cluster: tcp://HOST:PORT, or local:N for N local "
                   "workers (the results do not depend on it)")  # fmt: skip
@click.option("--stop-on-failure", is_flag=True, help="stop at the first failing run")
@click.option("--versus-sweep", is_flag=True,
              help="then run a plain sweep of as many runs into OUT/sweep, for "
                   "`seedbed report OUT --html` to compare coverage with")  # fmt: skip
@click.option(
    "--seed-timeout",
    type=SECONDS,
    default=300.0,
    show_default=True,
    help="wall-clock seconds one run may take on a worker (with --jobs > 1)",
)
@click.option("--branches", "branches", multiple=True, metavar="PACKAGE",
              help="also count the branches taken in PACKAGE's code as features (repeatable; "
                   "Python 3.12+, sys.monitoring; off by default: it costs run time)")  # fmt: skip
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="step budget per run")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget per run, seconds")  # fmt: skip
@click.option("--recheck", type=click.IntRange(min=0), default=DEFAULT_SHARE, show_default=True,
              metavar="N", help="run 1 run in N (and the first) again in the same process "
              "after other runs; a difference fails the search (0: off)")  # fmt: skip
@click.option("--exhaustive", is_flag=True,
              help="run every schedule within --max-delays deviations from the default "
                   "order (a program whose only choices are schedules); exit 0 once the "
                   "space is exhausted, 1 at a failing schedule")  # fmt: skip
@click.option("--max-delays", type=click.IntRange(min=0), default=None, metavar="K",
              help="with --exhaustive: the delay bound (2 finds most races)")  # fmt: skip
@saved_flag
@explore_flags
def explore_command(target: str, runs: int | None, budget: str | None, seed: int, jobs: int,
                    out: str | None, resume: bool, scheduler: str | None,
                    stop_on_failure: bool, versus_sweep: bool, seed_timeout: float,
                    branches: tuple[str, ...],
                    max_steps: int | None, max_time: float | None, recheck: int,
                    saved: bool, exhaustive: bool, max_delays: int | None,
                    **flags: Any) -> None:  # fmt: skip
    """Search TARGET's runs for new coverage: keep the runs that reach a new
    feature and branch from them; write every failure as a choice file. With
    --exhaustive, run every schedule within --max-delays K instead."""
    if exhaustive or max_delays is not None:
        given = {"--runs": runs, "--budget": budget, "--resume": resume or None,
                 "--scheduler": scheduler, "--versus-sweep": versus_sweep or None,
                 "--branches": branches or None, "--jobs": jobs if jobs != 1 else None}  # fmt: skip
        _exhaustive(target, max_delays, exhaustive, out, seed, saved, given,
                    {"max_steps": max_steps, "max_time": max_time, **flags})  # fmt: skip
        return
    try:
        seconds = parse_duration(budget) if budget is not None else None
        options = {"max_steps": max_steps, "max_time": max_time, **explore_options(**flags)}
        options = {key: value for key, value in options.items() if value is not None}
        spec = ExploreSpec(target, Path(out) if out else default_out(target), seed, runs, seconds,
                           jobs, resume, stop_on_failure, options, runner_prefix(),
                           seed_timeout, scheduler, branches=tuple(branches),
                           argv=argv(), recheck=recheck, saved=saved)  # fmt: skip
        search = explore(spec)
        plain = explore(versus(spec, search.state.runs)) if versus_sweep else None
    except (UsageError, OSError) as exc:
        usage_error(str(exc))
        return
    lines = summary_lines(spec, search)
    if search.saved is not None:
        lines = saved_lines(search.saved) + lines + kept_lines(search.saved)
    for line in lines:
        echo(line)
    if plain is not None:
        echo(f"plain sweep of {plain.state.runs} runs ({spec.out / SWEEP}): "
                   f"{len(plain.state.seen)} features reached")  # fmt: skip
    still = search.saved is not None and search.saved.still_failing
    sys.exit(1 if search.state.buckets or search.rechecks.differed or still else 0)


def _exhaustive(target: str, max_delays: int | None, exhaustive: bool, out: str | None,
                seed: int, saved: bool, given: dict[str, Any],
                flags: dict[str, Any]) -> None:  # fmt: skip
    """`explore --exhaustive --max-delays K`: see `seedbed._harness.search._exhaustive`."""
    if not exhaustive:
        usage_error("--max-delays goes with --exhaustive: explore TARGET --exhaustive "
                    "--max-delays K")  # fmt: skip
    if max_delays is None:
        usage_error("--exhaustive needs a bound: --max-delays K (2 finds most races)")
    extra = [flag for flag, value in given.items() if value is not None]
    if extra:
        usage_error(f"--exhaustive runs every schedule here, one after another, until the "
                    f"bound is exhausted: drop {extra[0]}")  # fmt: skip
    assert max_delays is not None
    try:
        options = {"max_steps": flags.pop("max_steps"), "max_time": flags.pop("max_time"),
                   **explore_options(**flags)}  # fmt: skip
        spec = Exhaustive(target, max_delays, Path(out) if out else default_out(target),
                          {k: v for k, v in options.items() if v is not None}, runner_prefix(),
                          seed, saved)  # fmt: skip
        found = exhaustive_search(spec, resolve(target))
    except (UsageError, OSError) as exc:
        usage_error(str(exc))
        return
    for line in exhaustive_lines(spec, found):
        echo(line)
    sys.exit(1 if found.failure is not None else 0)
