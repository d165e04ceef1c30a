"""What the command line does with the user's program misbehaving in odd ways.

Shared by every command that runs user code (`run`, `replay`, `sweep`, and
the commands other modules add), so that none of them shows a traceback for
a mistake in the user's program:

- `safe_repr`: a returned value whose `repr` raises (or is huge) still prints;
- `exit_from_user_code`: a program that calls `sys.exit` or raises
  `KeyboardInterrupt` inside a run gets one line naming what happened, the
  seed and the replay command, and the exit status a failed run has (1), or
  130 for an interrupt, as shells expect;
- `os_exit_reported`: a program that calls `os._exit` inside `seedbed run`
  leaves at once (nothing runs after it, by design), but first one line on
  stderr says so, with the seed, instead of a silent exit status;
- `echo`: every line a command prints, with the control characters a
  program's text may carry (an escape sequence that retitles or clears the
  terminal, a right-to-left override) written as escapes (`_core.printable`).
  Commands print through it, never through `click.echo` (ruff's TID251).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from seedbed._core.printable import terminal

EXIT_FAILED, EXIT_INTERRUPTED = 1, 130


def echo(message: object = "", *, err: bool = False) -> None:
    """Print `message` (on stderr with `err`), its control characters escaped."""
    click.echo(terminal(str(message)), err=err)  # noqa: TID251 (the one place that may)


def safe_repr(value: Any, limit: int = 200) -> str:
    """`repr(value)`, cut at `limit`; a repr that raises is described instead."""
    try:
        text = repr(value)
    except Exception as exc:
        return f"<{type(value).__name__} whose repr raised {type(exc).__name__}: {exc}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def exit_from_user_code(
    exc: SystemExit | KeyboardInterrupt, target: str, seed: int | None = None
) -> NoReturn:
    """Report a `sys.exit` or `KeyboardInterrupt` raised inside a run, and exit.

    `seed` is the run's when one seed was run (the replay command follows).
    """
    where = f"seed={seed}" if seed is not None else "during the sweep"
    again = f"; replay: seedbed run {target} --seed {seed}" if seed is not None else ""
    if isinstance(exc, KeyboardInterrupt):
        echo(f"interrupted: {target} ({where}, KeyboardInterrupt){again}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    echo(
        f"SystemExit: {target} called sys.exit({safe_repr(exc.code, 60)}) inside the run "
        f"({where}): a simulated program returns or raises, it must not exit{again}",
        err=True,
    )
    sys.exit(EXIT_FAILED)


@contextmanager
def os_exit_reported(target: str, seed: int | None) -> Iterator[None]:
    """While the block runs, `os._exit(n)` prints one line before it exits with `n`."""
    real = os._exit

    def reported(status: int) -> NoReturn:
        where = f"seed={seed}" if seed is not None else "the run"
        again = f"; replay: seedbed run {target} --seed {seed}" if seed is not None else ""
        line = (
            f"os._exit: {target} called os._exit({safe_repr(status, 30)}) inside the run "
            f"({where}): the run ended with no result; a simulated program returns or "
            f"raises{again}"
        )
        sys.stderr.write(terminal(line) + "\n")
        sys.stderr.flush()
        real(status)

    os._exit = reported
    try:
        yield
    finally:
        os._exit = real
