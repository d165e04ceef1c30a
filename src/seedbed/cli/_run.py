"""`seedbed run` and `seedbed replay`: one seed of a target, and its replay.

`run` runs any target (an async main, a Scenario, a function that builds a
Simulation) through the harness's `run_target`; `replay` re-runs one against
a recorded trace or under a seed. Both print the outcome one way: a line of
numbers (or `--json`), the failure with its replay command, exit 1.
"""

from __future__ import annotations

import gc
import json
import os
import re
import sys
from contextlib import ExitStack
from typing import Any

import click

from seedbed._core.tracefile import RecordedTrace, check_target, labelled, read_trace
from seedbed._harness.explore import explore_options
from seedbed._harness.shrink import replay_choices
from seedbed._harness.targets import run_target
from seedbed.aio import _breakpoint
from seedbed.aio._fold import folded
from seedbed.aio.runner import replay as replay_run
from seedbed.cli._explore import explore_flags
from seedbed.cli._group import SEED, SEED_HELP, describe_value, resolve_or_exit, usage_error
from seedbed.cli._guard import echo, exit_from_user_code, os_exit_reported
from seedbed.errors import Nondeterminism, SimulationFailure, UsageError
from seedbed.scenario import Scenario
from seedbed.scenario._report import describe_faults
from seedbed.sweep import summarize
from seedbed.world._disks import saving

EVENTS = click.option(
    "--events", type=click.Choice(["story", "all"]), default="story", show_default=True,
    help="a failure's report: its story and last events without draws, or all of it",
)  # fmt: skip


@click.command()
@click.argument("target")
@click.option("--seed", type=SEED, default=None, help=SEED_HELP + " (required without --choices)")
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="step budget")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget in seconds")  # fmt: skip
@click.option("--strict", is_flag=True, help="a swallowed cancellation fails the run")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="write the run's events to this JSON Lines file (a new or regular "
                   "file: written beside it, then renamed over it)")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--break-at", "break_at", default=None, metavar="STEP|TIME",
              help="open the debugger before this step (or virtual time) runs")  # fmt: skip
@click.option("--choices", "choices_path", type=click.Path(dir_okay=False), default=None,
              help="replay the choices in this file (from `seedbed shrink`)")  # fmt: skip
@click.option("--load-disks", "load_disks", type=click.Path(file_okay=False), default=None,
              help="start the world's nodes on the disks saved in this folder")  # fmt: skip
@click.option("--save-disks", "save_disks", type=click.Path(file_okay=False), default=None,
              help="save every node's disk to this folder when the run ends")  # fmt: skip
@click.option(
    "--disk-state",
    type=click.Choice(["synced", "crashed"]),
    default="synced",
    show_default=True,
    help="with --save-disks: what is durable, or what a crash at the end leaves",
)
@EVENTS
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
    load_disks: str | None,
    save_disks: str | None,
    disk_state: str,
    events: str,
    **explore: Any,
) -> None:
    """Run TARGET under one seed: an async main, a Scenario, or a function f(seed)
    that builds and runs a Simulation (module:name or file.py:name).

    A plain program gets a default budget (10,000,000 steps, 3600 virtual
    seconds) so a livelocked or forever-serving one ends in BudgetExceeded.
    """

    if seed is None and choices_path is None:
        usage_error("run needs --seed N (or --choices FILE, which holds its seed)")
    obj = resolve_or_exit(target)
    try:
        stack = ExitStack()
        stack.enter_context(labelled(target=canonical_target(target)))
        stack.enter_context(os_exit_reported(target, seed))
        _breakpoint.request(_breakpoint.parse(break_at) if break_at is not None else None)
        if save_disks is not None:
            stack.enter_context(saving(save_disks, disk_state))
        options = {"max_steps": max_steps, "max_time": max_time, "strict": strict,
                   "disks": load_disks, **explore_options(**explore)}  # fmt: skip
        if choices_path is not None:
            outcome = replay_choices(
                lambda s, **o: run_target(obj, s, trace=trace_path, target=target, **o),
                choices_path, target, seed, options,
            )  # fmt: skip
        else:
            assert seed is not None
            outcome = run_target(obj, seed, trace=trace_path, target=target, **options)
    except (UsageError, OSError) as exc:
        usage_error(str(exc))
        return
    except (SystemExit, KeyboardInterrupt) as exc:
        exit_from_user_code(exc, target, seed)
    finally:
        stack.close()
        _breakpoint.request(None)
    _print_outcome(outcome, as_json, events)


def canonical_target(target: str) -> str:
    """TARGET as a trace header records it: a file target's path made absolute,
    so the same file named from another folder is the same target."""
    where, colon, name = target.rpartition(":")
    if colon and where.endswith(".py"):
        return f"{os.path.abspath(where)}:{name}"
    return target


def _recorded_for(trace_path: str, target: str) -> None:
    """Refuse, before running anything, a trace the CLI recorded for another target."""
    recorded = RecordedTrace(trace_path)
    try:
        check_target(trace_path, recorded.header, canonical_target(target))
    finally:
        recorded.close()


def _print_outcome(outcome: Any, as_json: bool, events: str = "story") -> None:
    error = outcome.error
    if as_json:
        record = {
            "seed": outcome.seed,
            "trace_hash": outcome.trace_hash,
            "steps": outcome.steps,
            "virtual_time": outcome.virtual_time,
            "value": None if error else describe_value(outcome.value),
            "failure": summarize(error) if error else None,
            "result_digest": outcome.result_digest,
            "report": outcome.report.as_dict() if outcome.report is not None else None,
        }
        if outcome.kind != "program":
            record.update(kind=outcome.kind, profile=outcome.profile, faults=outcome.faults,
                          assertions=outcome.assertions, location=outcome.location)  # fmt: skip
        echo(json.dumps(record, sort_keys=True))
    else:
        numbers = (
            f"seed={outcome.seed} trace_hash={outcome.trace_hash} steps={outcome.steps} "
            if outcome.trace_hash is not None
            else f"seed={outcome.seed} steps={outcome.steps} "
        )
        vt = outcome.virtual_time
        echo(
            numbers
            + (f"virtual_time={vt:.6f}s" if vt is not None else "")
            + ("" if error else f" value={describe_value(outcome.value)}")
        )
        if outcome.faults and outcome.report is None:  # a report says it once, below
            echo(f"faults: {describe_faults(outcome.faults)}")
    if error is not None:
        _print_failure(error, outcome.report, events)
        step = _failing_step(outcome)
        if step is not None and outcome.replay.startswith("seedbed run "):
            echo(f"debug it: {outcome.replay} --break-at {step}", err=True)
        sys.exit(1)


def _print_failure(error: BaseException, report: Any, events: str) -> None:
    """The failure, once: its message, then its report (or, without one, its notes)."""
    if report is None:
        echo(f"{type(error).__name__}: {error}", err=True)
        for note in getattr(error, "__notes__", []):
            echo(note, err=True)
        return
    message = error.message if isinstance(error, SimulationFailure) else str(error)
    echo(f"{type(error).__name__}: {message}", err=True)
    for note in getattr(error, "__notes__", []):
        if not note.startswith("  seed="):  # the report says where, better
            echo(note, err=True)
    echo(report.describe(events=events), err=True)
    echoes = _collect_echoes(error)
    if echoes:
        plural = "s" if echoes > 1 else ""
        echo(f"  ({echoes} later report{plural} of tasks the failure left behind "
                   "folded: the same error, or one already shown)", err=True)  # fmt: skip


def _collect_echoes(error: BaseException) -> int:
    """Let the failed run's leftovers go now (their frames hold the loop and its
    failed tasks), so their folded reports are counted here, not at exit."""
    before = folded()
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        error.__traceback__ = None
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    gc.collect()
    return folded() - before


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


@click.command()
@click.argument("target")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="the trace file recorded by `seedbed run --trace`")  # fmt: skip
@click.option("--seed", type=SEED, default=None, help="re-run this seed (no recording needed)")
@click.option("--json", "as_json", is_flag=True, help="with --seed: print one JSON object")
@EVENTS
def replay(
    target: str, trace_path: str | None, seed: int | None, as_json: bool, events: str
) -> None:
    """Re-run TARGET: against a recorded trace (stop at the first divergence), or
    under a seed (what a failure's replay line says)."""
    if (trace_path is None) == (seed is None):
        usage_error("replay needs exactly one of --trace FILE or --seed N")
    obj = resolve_or_exit(target)
    if seed is not None:
        try:
            outcome = run_target(obj, seed, target=target)
        except (UsageError, OSError) as exc:
            usage_error(str(exc))
            return
        except (SystemExit, KeyboardInterrupt) as exc:
            exit_from_user_code(exc, target, seed)
        _print_outcome(outcome, as_json, events)
        return
    assert trace_path is not None
    try:
        _recorded_for(trace_path, target)
        if isinstance(obj, Scenario):
            result = _replay_scenario(obj, trace_path)
        else:
            result = replay_run(obj, trace=trace_path)
    except UsageError as exc:
        usage_error(str(exc))
        return
    except (SystemExit, KeyboardInterrupt) as exc:
        exit_from_user_code(exc, target)
    except Nondeterminism as exc:
        echo(f"Nondeterminism: {exc}", err=True)
        sys.exit(1)
    except Exception as exc:  # the recorded failure, reproduced
        echo(f"replayed the recorded failure: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
    echo(f"replay matched: seed={result.seed} trace_hash={result.trace_hash}")


def _replay_scenario(scenario: Any, trace_path: str) -> Any:
    """Run a scenario against its recording, with the budgets it was recorded with."""
    recorded = read_trace(trace_path)
    options = recorded.header.get("options", {})
    overrides = {key: options[key] for key in ("max_steps", "max_time", "strict") if key in options}
    result, error = scenario.execute(recorded.seed, recording=trace_path, overrides=overrides)
    if error is not None:
        raise error
    return result
