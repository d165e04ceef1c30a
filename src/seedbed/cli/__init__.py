"""The `seedbed` command: a thin shell over the library, every command in this package.

Every process this command runs hashes strings with seedbed's fixed seed: when
started under another `PYTHONHASHSEED`, it re-executes itself first, so a seed
replays the same from any shell. Exit codes: 0 success, 1 a run failed (or a
replay diverged), 2 bad input, with a one-line message and no traceback.

One module per command family: `_run` (run, replay), `_sweep` (sweep,
check-determinism), `_shrink`, `_report`, `_check` (check-history, with
`_txn` for transaction histories), `_search` (explore); `_group` holds the group and what the
commands share, `_guard` the user's program misbehaving, `_explore` the
exploration flags. This is the only package that imports click (besides a
sweep's progress lines).
"""

from __future__ import annotations

import os
import sys

from seedbed._core.hashseed import fixed_env, hash_seed_is_fixed
from seedbed.cli._check import check_history
from seedbed.cli._group import SEED, cli
from seedbed.cli._guard import echo
from seedbed.cli._lint import lint
from seedbed.cli._report import report
from seedbed.cli._run import replay, run
from seedbed.cli._search import explore_command
from seedbed.cli._shrink import shrink
from seedbed.cli._sweep import check_determinism, sweep
from seedbed.cli._view import view

__all__ = ["SEED", "cli", "main"]

for _command in (run, replay, sweep, check_determinism, check_history, report, shrink, lint, view):
    cli.add_command(_command)
cli.add_command(explore_command)  # seedbed explore: coverage-guided search (issue 26)


def main() -> None:
    """Entry point: fix the hash seed (re-executing if needed), then dispatch."""
    if not hash_seed_is_fixed() and os.environ.get("SEEDBED_REEXEC") != "1":
        env = fixed_env()
        env["SEEDBED_REEXEC"] = "1"
        argv = [sys.executable, "-m", "seedbed", *sys.argv[1:]]
        os.execve(sys.executable, argv, env)
    if sys.flags.optimize:
        echo("error: seedbed needs assertions on; run without python -O", err=True)
        sys.exit(2)
    cli(prog_name="seedbed")
