"""`seedbed explore`: coverage-guided search over a target's runs."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from seedbed._harness.explore import explore_options
from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.search._log import LOG
from seedbed._harness.search._recheck import DEFAULT_SHARE
from seedbed._harness.search._store import SWEEP
from seedbed._harness.search._summary import summary_lines
from seedbed._harness.sweeps._command import runner_prefix
from seedbed._harness.sweeps._engine import argv
from seedbed.cli._explore import explore_flags
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
@explore_flags
def explore_command(target: str, runs: int | None, budget: str | None, seed: int, jobs: int,
                    out: str | None, resume: bool, scheduler: str | None,
                    stop_on_failure: bool, versus_sweep: bool, seed_timeout: float,
                    branches: tuple[str, ...],
                    max_steps: int | None, max_time: float | None, recheck: int,
                    **flags: Any) -> None:  # fmt: skip
    """Search TARGET's runs for new coverage: keep the runs that reach a new
    feature and branch from them; write every failure as a choice file."""
    try:
        seconds = parse_duration(budget) if budget is not None else None
        options = {"max_steps": max_steps, "max_time": max_time, **explore_options(**flags)}
        options = {key: value for key, value in options.items() if value is not None}
        spec = ExploreSpec(target, Path(out) if out else default_out(target), seed, runs, seconds,
                           jobs, resume, stop_on_failure, options, runner_prefix(),
                           seed_timeout, scheduler, branches=tuple(branches),
                           argv=argv(), recheck=recheck)  # fmt: skip
        search = explore(spec)
        plain = explore(versus(spec, search.state.runs)) if versus_sweep else None
    except (UsageError, OSError) as exc:
        usage_error(str(exc))
        return
    for line in summary_lines(spec, search):
        echo(line)
    if plain is not None:
        echo(f"plain sweep of {plain.state.runs} runs ({spec.out / SWEEP}): "
                   f"{len(plain.state.seen)} features reached")  # fmt: skip
    sys.exit(1 if search.state.buckets or search.rechecks.differed else 0)
