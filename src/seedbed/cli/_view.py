"""The `seedbed view` command: a trace file, or one seed of a target, as a diagram page.

`seedbed view TRACE [-o run.html]` draws a recorded trace;
`seedbed view TARGET --seed N [-o F]` (or `--choices FILE`, a choice file
from `seedbed shrink`) runs the target with its trace written to a temporary
file, then draws that. Exit codes as everywhere in the CLI: 0 the page was
written (whether the run failed or not: the page shows it), 2 bad input with
one line on stderr (no page; or, for a trace cut short, the page up to the
cut).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from seedbed._harness.explore import explore_options
from seedbed.cli._explore import explore_flags
from seedbed.cli._guard import echo
from seedbed.errors import UsageError


def _fail(message: str) -> None:
    echo(f"error: {message}", err=True)
    sys.exit(2)


def _record(
    target: str, seed: int | None, choices_path: str | None, trace: Path, options: dict[str, Any]
) -> Any:
    """Run one seed of `target` with its trace written to `trace`, as `seedbed run`
    would with the same flags; the outcome."""
    from seedbed._harness.targets import resolve, run_target

    obj = resolve(target)
    if choices_path is not None:
        from seedbed._harness.shrink import replay_choices

        return replay_choices(
            lambda s, **o: run_target(obj, s, trace=str(trace), **o),
            choices_path, target, seed, options,
        )  # fmt: skip
    assert seed is not None
    return run_target(obj, seed, trace=str(trace), **options)


def _seed(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        seed = int(value, 0)
    except ValueError:
        _fail(f"--seed {value!r} is not a seed: use a non-negative integer like 42 or 0xC0FFEE")
        raise
    if seed < 0:
        _fail(f"--seed {value!r} is negative: seeds are non-negative integers")
    return seed


def _outcome_line(error: BaseException | None) -> str:
    if error is None:
        return "; the run passed"
    first = str(error).splitlines()[0] if str(error) else ""
    if len(first) > 160:
        first = first[:157] + "..."
    return f"; the run failed: {type(error).__name__}: {first}"


@click.command("view")
@click.argument("source")
@click.option(
    "--max-steps", type=click.IntRange(min=1), default=None, help="step budget (a target)"
)
@click.option("--max-time", type=click.FloatRange(min=0, min_open=True), default=None,
              help="virtual-time budget in seconds (a target)")  # fmt: skip
@click.option("--strict", is_flag=True, help="a swallowed cancellation fails the run (a target)")
@explore_flags
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="the page to write (default: TRACE.html, or view-seed-N.html)")  # fmt: skip
@click.option("--seed", "seed_text", default=None, metavar="N",
              help="run SOURCE, a target, under this seed and draw its trace")  # fmt: skip
@click.option("--choices", "choices_path", type=click.Path(dir_okay=False), default=None,
              help="run SOURCE, a target, replaying this choice file")  # fmt: skip
def view(
    source: str,
    output: str | None,
    seed_text: str | None,
    choices_path: str | None,
    max_steps: int | None,
    max_time: float | None,
    strict: bool,
    **explore: Any,
) -> None:
    """Draw a run as a space-time diagram: SOURCE is a trace file (from
    `seedbed run --trace`), or a target with --seed N or --choices FILE (and
    the run flags `seedbed run` takes, so a failure's printed view command
    runs what its replay command runs)."""
    from seedbed._view._write import write_view

    seed = _seed(seed_text)
    try:
        options = {"max_steps": max_steps, "max_time": max_time, "strict": strict,
                   **explore_options(**explore)}  # fmt: skip
        if seed is None and choices_path is None:
            if Path(source).is_dir():
                _fail(f"{source} is a directory, not a trace file (from seedbed run --trace)")
            page = output or str(Path(source).with_suffix(".html"))
            diagram = write_view(source, page)
            outcome_line = ""
        else:
            page = output or f"view-seed-{seed if seed is not None else 'choices'}.html"
            with tempfile.TemporaryDirectory(prefix="seedbed-view-") as scratch:
                trace = Path(scratch) / "run.trace"
                outcome = _record(source, seed, choices_path, trace, options)
                diagram = write_view(trace, page)
            outcome_line = _outcome_line(outcome.error)
    except (UsageError, OSError) as exc:
        _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return
    echo(
        f"wrote {page}: {len(diagram.times):,} events drawn on {len(diagram.lanes)} lanes, "
        f"{len(diagram.arrows):,} messages, {len(diagram.spans):,} fault spans{outcome_line}"
    )
    if diagram.meta.get("defect"):  # as `seedbed report` does: the page is written, and says so
        _fail(f"{diagram.meta['defect']} (the page shows the run up to there)")
