"""The `seedbed` command: a thin shell over the library.

Every process this command runs hashes strings with seedbed's fixed seed: when
started under another `PYTHONHASHSEED`, it re-executes itself first, so a seed
replays the same from any shell. Exit codes: 0 success, 1 a run failed (or a
replay diverged), 2 bad input, with a one-line message and no traceback.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from seedbed._cli_explore import explore_flags, explore_options
from seedbed._hashseed import fixed_env, hash_seed_is_fixed

_SEED_HELP = "the seed: decimal or 0x-prefixed hex"


class _SeedType(click.ParamType):  # type: ignore[type-arg]
    """Seeds as people write them: 42 or 0xC0FFEE."""

    name = "seed"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            seed = int(str(value), 0)
        except ValueError:
            self.fail(f"{value!r} is not a seed: use a non-negative integer like 42 or 0xC0FFEE")
        if seed < 0:
            self.fail(f"{value!r} is negative: seeds are non-negative integers")
        return seed


SEED = _SeedType()


def _usage_error(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def _resolve(target: str) -> Callable[..., Any]:
    from seedbed._target import resolve
    from seedbed.errors import UsageError

    try:
        return resolve(target)
    except UsageError as exc:
        _usage_error(str(exc))
        raise  # unreachable: _usage_error exits


def _options(max_steps: int | None, max_time: float | None, strict: bool) -> dict[str, Any]:
    return {"max_steps": max_steps, "max_time": max_time, "strict": strict}


def _describe_value(value: Any) -> str:
    from seedbed._cli_guard import safe_repr

    return safe_repr(value)


@click.group()
@click.version_option(package_name="seedbed")
def cli() -> None:
    """Deterministic simulation testing for Python."""


@cli.command()
@click.argument("target")
@click.option("--seed", type=SEED, default=None, help=_SEED_HELP + " (required without --choices)")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="step budget")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget in seconds")  # fmt: skip
@click.option("--strict", is_flag=True, help="a swallowed cancellation fails the run")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="write the run's events to this JSON Lines file")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--break-at", "break_at", default=None, metavar="STEP|TIME",
              help="open the debugger before this step (or virtual time) runs")  # fmt: skip
@click.option("--choices", "choices_path", type=click.Path(dir_okay=False), default=None,
              help="replay the choices in this file (from `seedbed shrink`)")  # fmt: skip
@explore_flags
def run(
    target: str,
    seed: int | None,
    max_steps: int | None,
    max_time: float | None,
    strict: bool,
    trace_path: str | None,
    as_json: bool,
    break_at: str | None,
    choices_path: str | None,
    **explore: Any,
) -> None:
    """Run TARGET under one seed: an async main, a Scenario, or a function f(seed)
    that builds and runs a Simulation (module:name or file.py:name).

    A plain program gets a default budget (10,000,000 steps, 3600 virtual
    seconds) so a livelocked or forever-serving one ends in BudgetExceeded.
    """
    from seedbed._cli_guard import exit_from_user_code
    from seedbed._target import run_target
    from seedbed.aio import _breakpoint
    from seedbed.errors import UsageError

    if seed is None and choices_path is None:
        _usage_error("run needs --seed N (or --choices FILE, which holds its seed)")
    obj = _resolve(target)
    try:
        _breakpoint.request(_breakpoint.parse(break_at) if break_at is not None else None)
        options = {"max_steps": max_steps, "max_time": max_time, "strict": strict,
                   **explore_options(**explore)}  # fmt: skip
        if choices_path is not None:
            from seedbed._shrink._command import replay_choices

            outcome = replay_choices(
                lambda s, **o: run_target(obj, s, trace=trace_path, **o),
                choices_path, target, seed, options,
            )  # fmt: skip
        else:
            assert seed is not None
            outcome = run_target(obj, seed, trace=trace_path, **options)
    except (UsageError, OSError) as exc:
        _usage_error(str(exc))
        return
    except (SystemExit, KeyboardInterrupt) as exc:
        exit_from_user_code(exc, target, seed)
    finally:
        _breakpoint.request(None)
    _print_outcome(outcome, as_json)


def _print_outcome(outcome: Any, as_json: bool) -> None:
    from seedbed.sweep import summarize

    error = outcome.error
    if as_json:
        record = {
            "seed": outcome.seed,
            "trace_hash": outcome.trace_hash,
            "steps": outcome.steps,
            "virtual_time": outcome.virtual_time,
            "value": None if error else _describe_value(outcome.value),
            "failure": summarize(error) if error else None,
            "result_digest": outcome.result_digest,
        }
        if outcome.kind != "program":
            record.update(kind=outcome.kind, profile=outcome.profile, faults=outcome.faults,
                          assertions=outcome.assertions, location=outcome.location)  # fmt: skip
        click.echo(json.dumps(record, sort_keys=True))
    else:
        numbers = (
            f"seed={outcome.seed} trace_hash={outcome.trace_hash} steps={outcome.steps} "
            if outcome.trace_hash is not None
            else f"seed={outcome.seed} steps={outcome.steps} "
        )
        vt = outcome.virtual_time
        click.echo(
            numbers
            + (f"virtual_time={vt:.6f}s" if vt is not None else "")
            + ("" if error else f" value={_describe_value(outcome.value)}")
        )
        if outcome.faults:
            from seedbed.scenario._report import describe_faults

            click.echo(f"faults: {describe_faults(outcome.faults)}")
    if error is not None:
        click.echo(f"{type(error).__name__}: {error}", err=True)
        for note in getattr(error, "__notes__", []):
            click.echo(note, err=True)
        step = _failing_step(outcome)
        if step is not None and outcome.replay.startswith("seedbed run "):
            click.echo(f"debug it: {outcome.replay} --break-at {step}", err=True)
        sys.exit(1)


def _failing_step(outcome: Any) -> int | None:
    """The step a failure happened in: the outcome's, or its error's note
    (`  seed=N step=S ...`, added to errors that are not SimulationFailures)."""
    if outcome.steps:
        return int(outcome.steps)
    for note in getattr(outcome.error, "__notes__", []):
        found = re.match(r"\s*seed=\S+ step=(\d+) ", note)
        if found:
            return int(found.group(1))
    return None


@cli.command()
@click.argument("target")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="the trace file recorded by `seedbed run --trace`")  # fmt: skip
@click.option("--seed", type=SEED, default=None, help="re-run this seed (no recording needed)")
@click.option("--json", "as_json", is_flag=True, help="with --seed: print one JSON object")
def replay(target: str, trace_path: str | None, seed: int | None, as_json: bool) -> None:
    """Re-run TARGET: against a recorded trace (stop at the first divergence), or
    under a seed (what a failure's replay line says)."""
    from seedbed._cli_guard import exit_from_user_code
    from seedbed.errors import Nondeterminism, UsageError
    from seedbed.scenario import Scenario

    if (trace_path is None) == (seed is None):
        _usage_error("replay needs exactly one of --trace FILE or --seed N")
    obj = _resolve(target)
    if seed is not None:
        from seedbed._target import run_target

        try:
            outcome = run_target(obj, seed)
        except (UsageError, OSError) as exc:
            _usage_error(str(exc))
            return
        except (SystemExit, KeyboardInterrupt) as exc:
            exit_from_user_code(exc, target, seed)
        _print_outcome(outcome, as_json)
        return
    assert trace_path is not None
    try:
        if isinstance(obj, Scenario):
            result = _replay_scenario(obj, trace_path)
        else:
            from seedbed.aio.runner import replay as replay_run

            result = replay_run(obj, trace=trace_path)
    except UsageError as exc:
        _usage_error(str(exc))
        return
    except (SystemExit, KeyboardInterrupt) as exc:
        exit_from_user_code(exc, target)
    except Nondeterminism as exc:
        click.echo(f"Nondeterminism: {exc}", err=True)
        sys.exit(1)
    except Exception as exc:  # the recorded failure, reproduced
        click.echo(f"replayed the recorded failure: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
    click.echo(f"replay matched: seed={result.seed} trace_hash={result.trace_hash}")


def _replay_scenario(scenario: Any, trace_path: str) -> Any:
    """Run a scenario against its recording, with the budgets it was recorded with."""
    from seedbed._core.tracefile import read_trace

    recorded = read_trace(trace_path)
    options = recorded.header.get("options", {})
    overrides = {key: options[key] for key in ("max_steps", "max_time", "strict") if key in options}
    result, error = scenario.execute(recorded.seed, recording=trace_path, overrides=overrides)
    if error is not None:
        raise error
    return result


@cli.command()
@click.argument("target")
@click.option("--seeds", type=click.IntRange(min=1), default=100, show_default=True,
              help="how many seeds to run")  # fmt: skip
@click.option("--first", type=SEED, default=0, show_default=True, help="the first seed")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="worker processes  [default: one per core]")  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="folder for results.jsonl  [default: .seedbed/sweeps/TARGET]")  # fmt: skip
@click.option("--resume", is_flag=True, help="continue the sweep in --out; skip finished seeds")
@click.option("--seed-timeout", type=click.FloatRange(min=0, min_open=True), default=300.0,
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
                   "workers (pip install 'seedbed[dask]')")  # fmt: skip
@explore_flags
def sweep(target: str, seeds: int, first: int, jobs: int | None, out: str | None, resume: bool,
          seed_timeout: float, max_steps: int | None, max_time: float | None, strict: bool,
          show_traceback: bool, require_sometimes: bool, as_json: bool,
          scheduler: str | None, **explore: Any) -> None:  # fmt: skip
    """Run TARGET under many seeds in parallel; keep every result; bucket the failures."""
    from seedbed._sweep._engine import SweepSpec, argv, default_jobs, default_out, run_sweep
    from seedbed.errors import UsageError

    try:
        explored = explore_options(**explore)
    except UsageError as exc:
        _usage_error(str(exc))
    spec = SweepSpec(
        target, first, seeds, jobs or default_jobs(), Path(out) if out else default_out(target),
        options={"max_steps": max_steps, "max_time": max_time, "strict": strict, **explored},
        resume=resume, seed_timeout=seed_timeout, as_json=as_json, traceback=show_traceback,
        require_sometimes=require_sometimes, argv=argv(), scheduler=scheduler,
    )  # fmt: skip
    try:
        code = run_sweep(spec)
    except (UsageError, OSError) as exc:
        _usage_error(str(exc))
        return
    sys.exit(code)


@cli.command("check-determinism")
@click.argument("target")
@click.option("--seeds", type=click.IntRange(min=1), default=20, show_default=True,
              help="how many seeds to check")  # fmt: skip
@click.option("--first", type=SEED, default=0, show_default=True, help="the first seed")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="worker processes per pass  [default: one per core]")  # fmt: skip
@click.option("--seed-timeout", type=click.FloatRange(min=0, min_open=True), default=300.0,
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
    from seedbed._sweep._command import runner_prefix
    from seedbed._sweep._determinism import check_determinism as check
    from seedbed._sweep._determinism import report_lines
    from seedbed._sweep._engine import default_jobs
    from seedbed.errors import UsageError

    options = {"max_steps": max_steps, "max_time": max_time, "strict": strict}
    settings = {"target": target, "options": options, "runner": runner_prefix()}
    try:
        compared, divergences = check(
            settings, range(first, first + seeds), jobs or default_jobs(), seed_timeout
        )
    except (UsageError, OSError) as exc:
        _usage_error(str(exc))
        return
    for line in report_lines(compared, divergences, as_json=as_json):
        click.echo(line)
    sys.exit(1 if divergences else 0)


def _register_commands() -> None:
    from seedbed._lint._command import lint
    from seedbed._report._command import report
    from seedbed._shrink._command import shrink
    from seedbed._view._command import view
    from seedbed.check._cli import check_history

    cli.add_command(check_history)
    cli.add_command(lint)
    cli.add_command(report)
    cli.add_command(shrink)
    cli.add_command(view)


def main() -> None:
    """Entry point: fix the hash seed (re-executing if needed), then dispatch."""
    if not hash_seed_is_fixed() and os.environ.get("SEEDBED_REEXEC") != "1":
        env = fixed_env()
        env["SEEDBED_REEXEC"] = "1"
        argv = [sys.executable, "-m", "seedbed", *sys.argv[1:]]
        os.execve(sys.executable, argv, env)
    if sys.flags.optimize:
        click.echo("error: seedbed needs assertions on; run without python -O", err=True)
        sys.exit(2)
    _register_commands()
    cli(prog_name="seedbed")
