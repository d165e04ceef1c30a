"""How a sweep looks on a terminal, and in a CI log.

On an interactive terminal a rich progress bar; otherwise (piped, CI) a plain
status line every 10% of the seeds, since rich prints nothing until the end
when its output is not a terminal. The summary is plain text either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from seedbed.aio.runner import RunOutcome
from seedbed.sweep import SeedFailure, sweep


def _report(total: int, failures: list[SeedFailure]) -> None:
    if not failures:
        click.echo(f"{total} seeds, no failures")
        return
    seeds = ", ".join(str(failure.seed) for failure in failures[:20])
    more = f" (+{len(failures) - 20} more)" if len(failures) > 20 else ""
    click.echo(f"{total} seeds, {len(failures)} failed: {seeds}{more}")
    first = failures[0]
    click.echo(f"first failure, seed {first.seed}: {first.error}")
    click.echo(f"replay it: {first.replay}")


def run_sweep(main: Callable[[], Any], seeds: Sequence[int], **options: Any) -> list[SeedFailure]:
    """Sweep with progress shown the right way for this terminal; print the summary."""
    console = Console(stderr=True)
    total = len(seeds)
    step = max(1, total // 10)
    done = [0, 0]  # runs, failures

    with Progress(
        TextColumn("sweeping"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        console=console,
        disable=not console.is_interactive,
    ) as progress:
        bar = progress.add_task("sweep", total=total, failed=0)

        def on_seed(seed: int, outcome: RunOutcome) -> None:
            done[0] += 1
            done[1] += outcome.error is not None
            progress.update(bar, advance=1, failed=done[1])
            if not console.is_interactive and (done[0] % step == 0 or done[0] == total):
                click.echo(f"  {done[0]}/{total} seeds, {done[1]} failed", err=True)

        result = sweep(main, seeds, on_seed=on_seed, **options)
    _report(result.seeds_run, result.failures)
    return result.failures
