"""`seedbed sweep` and `seedbed check-determinism`: many seeds in worker processes.

Thin shells over the harness's sweep engine (`seedbed._harness.sweeps`):
the options become a `SweepSpec` or the settings of a determinism check.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from seedbed._core.validate import SEED_LIMIT
from seedbed._harness.explore import explore_options
from seedbed._harness.sweeps._command import runner_prefix
from seedbed._harness.sweeps._determinism import check_determinism as check
from seedbed._harness.sweeps._determinism import report_lines
from seedbed._harness.sweeps._engine import SweepSpec, argv, default_jobs, default_out, run_sweep
from seedbed._harness.sweeps._recheck import DEFAULT_SHARE
from seedbed.cli._explore import explore_flags
from seedbed.cli._group import SECONDS, SEED, usage_error
from seedbed.cli._guard import echo
from seedbed.errors import UsageError

# A sweep lists its seeds to run before it starts one: past ten million, a
# typo (an extra digit or twenty) would hang in that list rather than sweep.
MAX_SEEDS = 10_000_000


def _seed_range(first: int, seeds: int) -> None:
    if first + seeds > SEED_LIMIT:
        usage_error(f"--first {first} --seeds {seeds} runs past the last seed, 2**64 - 1")


@click.command()
@click.argument("target")
@click.option("--seeds", type=click.IntRange(min=1, max=MAX_SEEDS), default=100,
              show_default=True, help="how many seeds to run")  # fmt: skip
@click.option("--first", type=SEED, default=0, show_default=True, help="the first seed")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="worker processes  [default: one per core]")  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="folder for results.jsonl  [default: .seedbed/sweeps/TARGET]")  # fmt: skip
@click.option("--resume", is_flag=True, help="continue the sweep in --out; skip finished seeds")
@click.option("--fresh", is_flag=True,
              help="move results in --out aside (to results.N.jsonl); start again")  # fmt: skip
@click.option("--seed-timeout", type=SECONDS, default=300.0,
              show_default=True, help="wall-clock seconds one seed may run")  # fmt: skip
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="step budget per seed")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget per seed, seconds")  # fmt: skip
@click.option("--strict", is_flag=True, help="a swallowed cancellation fails the run")
@click.option("--traceback", "show_traceback", is_flag=True,
              help="show the full traceback of each bucket's smallest failing seed")  # fmt: skip
@click.option("--require-sometimes", is_flag=True,
              help="a `sometimes` assertion never true in any seed fails the sweep")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="end with one JSON object on stdout")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="run on a Dask cluster: tcp://HOST:PORT, or local:N for N local "
                   "workers (needs dask.distributed: pip install 'dask[distributed]')")  # fmt: skip
@click.option(
    "-x",
    "--fail-fast",
    is_flag=True,
    help="stop at the first failing seed (results kept, summary shown, exit 1)",
)
@click.option(
    "--max-failures",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="stop once N seeds failed (results kept, summary shown, exit 1)",
)
@click.option(
    "--recheck",
    type=click.IntRange(min=0),
    default=DEFAULT_SHARE,
    show_default=True,
    metavar="N",
    help="run 1 seed in N (at least one) a second time in its worker, after other seeds; "
    "a different hash or result fails the sweep (0: off)",
)
@explore_flags
def sweep(target: str, seeds: int, first: int, jobs: int | None, out: str | None, resume: bool,
          fresh: bool, seed_timeout: float, max_steps: int | None, max_time: float | None,
          strict: bool, show_traceback: bool, require_sometimes: bool, as_json: bool,
          scheduler: str | None, fail_fast: bool, max_failures: int | None, recheck: int,
          **explore: Any) -> None:  # fmt: skip
    """Run TARGET under many seeds in parallel; keep every result; bucket the failures."""
    _seed_range(first, seeds)
    try:
        explored = explore_options(**explore)
    except UsageError as exc:
        usage_error(str(exc))
    spec = SweepSpec(
        target, first, seeds, jobs or default_jobs(), Path(out) if out else default_out(target),
        options={"max_steps": max_steps, "max_time": max_time, "strict": strict, **explored},
        resume=resume, fresh=fresh, seed_timeout=seed_timeout, as_json=as_json,
        traceback=show_traceback, require_sometimes=require_sometimes, argv=argv(),
        scheduler=scheduler, max_failures=1 if fail_fast else max_failures, recheck=recheck,
    )  # fmt: skip
    try:
        code = run_sweep(spec)
    except (UsageError, OSError) as exc:
        usage_error(str(exc))
        return
    sys.exit(code)


@click.command("check-determinism")
@click.argument("target")
@click.option("--seeds", type=click.IntRange(min=1, max=MAX_SEEDS), default=20,
              show_default=True, help="how many seeds to check")  # fmt: skip
@click.option("--first", type=SEED, default=0, show_default=True, help="the first seed")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="worker processes per pass  [default: one per core]")  # fmt: skip
@click.option("--seed-timeout", type=SECONDS, default=300.0,
              show_default=True, help="wall-clock seconds one seed may run")  # fmt: skip
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="step budget per seed")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget per seed, seconds")  # fmt: skip
@click.option("--strict", is_flag=True, help="a swallowed cancellation fails the run")
@click.option("--json", "as_json", is_flag=True, help="end with one JSON object on stdout")
def check_determinism(target: str, seeds: int, first: int, jobs: int | None, seed_timeout: float,
                      max_steps: int | None, max_time: float | None, strict: bool,
                      as_json: bool) -> None:  # fmt: skip
    """Run every seed twice, in fresh processes under different hash seeds; compare."""
    _seed_range(first, seeds)
    options = {"max_steps": max_steps, "max_time": max_time, "strict": strict}
    settings = {"target": target, "options": options, "runner": runner_prefix()}
    try:
        compared, divergences = check(
            settings, range(first, first + seeds), jobs or default_jobs(), seed_timeout
        )
    except (UsageError, OSError) as exc:
        usage_error(str(exc))
        return
    for line in report_lines(compared, divergences, as_json=as_json):
        echo(line)
    sys.exit(1 if divergences else 0)
