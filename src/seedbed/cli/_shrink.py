"""`seedbed shrink`: the smallest run of a target that fails the same way."""

from __future__ import annotations

import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from seedbed._core import choices
from seedbed._core.files import writable
from seedbed._harness.explore import explore_options
from seedbed._harness.shrink._file import ChoiceFile, read_choices, write_choices
from seedbed._harness.shrink._search import PHASE, Shrinker, Shrunk, builds_own_world
from seedbed._harness.shrink._story import last_lines, read_events, schedule_lines
from seedbed._harness.shrink._trial import asyncio_log_off, failure_of
from seedbed._harness.targets import resolve, run_target
from seedbed.cli._explore import explore_flags
from seedbed.cli._group import SECONDS, SEED
from seedbed.cli._guard import echo
from seedbed.errors import UsageError
from seedbed.scenario._story import entry_line, select


def _fail(message: str) -> None:
    echo(f"error: {message}", err=True)
    sys.exit(2)


@click.command()
@click.argument("target")
@click.option("--seed", type=str, default=None, help="the failing seed (decimal or 0x hex)")
@click.option("--choices", "choices_path", type=click.Path(dir_okay=False), default=None,
              help="shrink further the run this choice file replays")  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False), required=True,
              help="where to write the shrunk choice file (JSON)")  # fmt: skip
@click.option("--budget", type=SECONDS, default=60.0,
              show_default=True, help="wall-clock seconds to spend shrinking")  # fmt: skip
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="step budget")
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget in seconds")  # fmt: skip
@explore_flags
def shrink(target: str, seed: str | None, choices_path: str | None, out: str, budget: float,
           max_steps: int | None, max_time: float | None, **explore: Any) -> None:  # fmt: skip
    """Minimize TARGET's failing run at --seed while the same failure happens;
    write a choice file that `seedbed run TARGET --choices FILE` replays."""
    try:
        writable(out, "--out")  # before the budget is spent, not after
        obj = resolve(target)
        options = {"max_steps": max_steps, "max_time": max_time, **explore_options(**explore)}
        source, recorded_seed = None, None
        if choices_path is not None:
            found = read_choices(choices_path, target)
            source, recorded_seed = found.choices, found.seed
            options = {**found.options, **_given(options)}
        the_seed = _pick_seed(SEED, seed, recorded_seed)
        with asyncio_log_off(), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # coroutines of cut-short trials
            shrunk = Shrinker(obj, the_seed, _given(options), budget).shrink(source)
            saved = ChoiceFile(target, the_seed, shrunk.best.chosen, _given(options),
                               shrunk.best.failure)  # fmt: skip
            write_choices(out, saved)
            story = _story(obj, saved)
    except (UsageError, OSError) as exc:
        _fail(str(exc))
        return
    for line in _report(target, out, shrunk, story):
        echo(line)


def _given(options: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in options.items() if value is not None}


def _pick_seed(seed_type: Any, given: str | None, recorded: int | None) -> int:
    if given is not None:
        try:
            return int(seed_type.convert(given, None, None))
        except click.BadParameter as exc:
            raise UsageError(f"--seed: {exc.message}") from None
    if recorded is None:
        raise UsageError("shrink needs --seed N (the failing seed) or --choices FILE")
    return recorded


@dataclass
class Story:
    """The shrunk run told once more: how its replay ended, its faults and world
    events, its schedule deviations and its last events."""

    replayed: dict[str, Any] | None
    happened: list[str]
    schedule: list[str]
    last: list[str]


def _story(obj: Any, saved: ChoiceFile) -> Story:
    """Replay the shrunk choices once more, traced and reported: the faults and
    world events its failure report tells, and where its schedule deviates."""
    with tempfile.TemporaryDirectory(prefix="seedbed-shrink-") as folder:
        path = str(Path(folder) / "trace.jsonl")
        traced = None if builds_own_world(obj) else path  # it sets its own trace
        given = {key: value for key, value in saved.options.items() if value is not None}
        with choices.session(saved.choices) as made:
            outcome = run_target(obj, saved.seed, trace=traced, **given)
        events = read_events(path) if Path(path).exists() else []
    report = outcome.report
    happened = []
    if report is not None:
        shown, _ = select(report.story, report.subjects, len(report.story))
        happened = [entry_line(entry, report.subjects).strip() for entry in shown]
    return Story(failure_of(outcome.error), happened, schedule_lines(events, made.choices),
                 last_lines(events))  # fmt: skip


def _report(target: str, out: str, shrunk: Shrunk, story: Story) -> list[str]:
    before, after = shrunk.original, shrunk.best
    stopped = " (budget used up)" if shrunk.out_of_time else ""
    problems = (after.failure or {}).get("problems")
    lanes = (
        f", {before.loud_lanes} -> {after.loud_lanes} raw lanes (hops) off typical"
        if before.loud_lanes != after.loud_lanes
        else ""
    )
    lines = [
        f"failure: {after.bucket}" + (f" ({problems})" if problems else ""),
        f"shrunk in {shrunk.seconds:.1f}s over {shrunk.trials} runs{stopped}: "
        f"faults {before.fault_count} -> {after.fault_count}, "
        f"steps {before.steps} -> {after.steps}, "
        f"draws off their typical value {before.loud} -> {after.loud}{lanes}",
        f"wrote {out}; replay: seedbed run {target} --choices {out}",
        f"view it as a diagram: seedbed view {target} --choices {out}",
    ]
    replayed = story.replayed["bucket"] if story.replayed else None
    if replayed != after.bucket:
        lines.append(f"warning: replaying the file ended in {replayed!r} instead")
    cut = next((c.value for c in after.chosen if (c.stream, c.reason) == PHASE), None)
    if isinstance(cut, float):
        lines.append(f"fault phase cut to {cut:.6f}s: the scenario's checks ran from then on")
    lines.append("faults and world events, by virtual time:" if story.happened else "faults: none")
    lines.extend(f"  {line}" for line in story.happened)
    if story.schedule:
        lines.append("schedule choices still off FIFO / the first node:")
        lines.extend(f"  {line}" for line in story.schedule)
    if story.last:
        lines.append(f"last {len(story.last)} events before the failure:")
        lines.extend(f"  {line}" for line in story.last)
    return lines
