"""`seedbed shrink`: the smallest run of a target that fails the same way."""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import click

from seedbed._core.files import writable
from seedbed._harness.explore import explore_options
from seedbed._harness.shrink._file import ChoiceFile, read_choices, write_choices
from seedbed._harness.shrink._search import PHASE, Shrinker, Shrunk, builds_own_world
from seedbed._harness.shrink._story import fault_lines, last_lines, read_events
from seedbed._harness.shrink._trial import Trial, asyncio_log_off, run_trial
from seedbed._harness.targets import resolve
from seedbed.cli._explore import explore_flags
from seedbed.cli._group import SECONDS, SEED
from seedbed.cli._guard import echo
from seedbed.errors import UsageError


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


def _story(obj: Any, saved: ChoiceFile) -> tuple[Trial, list[str], list[str]]:
    """Replay the shrunk choices once more with a trace: its faults and last events."""
    with tempfile.TemporaryDirectory(prefix="seedbed-shrink-") as folder:
        path = str(Path(folder) / "trace.jsonl")
        traced = None if builds_own_world(obj) else path  # it sets its own trace
        trial = run_trial(obj, saved.seed, saved.choices, saved.options, trace=traced)
        events = read_events(path) if Path(path).exists() else []
    return trial, fault_lines(events), last_lines(events)


def _report(target: str, out: str, shrunk: Shrunk, story: tuple[Trial, list[str], list[str]]
            ) -> list[str]:  # fmt: skip
    before, after = shrunk.original, shrunk.best
    replayed, faults, last = story
    stopped = " (budget used up)" if shrunk.out_of_time else ""
    problems = (after.failure or {}).get("problems")
    lines = [
        f"failure: {after.bucket}" + (f" ({problems})" if problems else ""),
        f"shrunk in {shrunk.seconds:.1f}s over {shrunk.trials} runs{stopped}: "
        f"faults {before.fault_count} -> {after.fault_count}, "
        f"steps {before.steps} -> {after.steps}, "
        f"choices {len(before.chosen)} -> {len(after.chosen)} "
        f"({before.loud} -> {after.loud} away from their default)",
        f"wrote {out}; replay: seedbed run {target} --choices {out}",
        f"view it as a diagram: seedbed view {target} --choices {out}",
    ]
    if replayed.signature != after.signature:
        lines.append(f"warning: replaying the file ended in {replayed.bucket!r} instead")
    cut = next((c.value for c in after.chosen if (c.stream, c.reason) == PHASE), None)
    if isinstance(cut, float):
        lines.append(f"fault phase cut to {cut:.6f}s: the scenario's checks ran from then on")
    lines.append("faults, by virtual time:" if faults else "faults: none")
    lines.extend(f"  {line}" for line in faults)
    if last:
        lines.append(f"last {len(last)} events before the failure:")
        lines.extend(f"  {line}" for line in last)
    return lines
