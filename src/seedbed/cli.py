"""The `seedbed` command: a thin shell over the library.

Every process this command runs hashes strings with seedbed's fixed seed: when
started under another `PYTHONHASHSEED`, it re-executes itself first, so a seed
replays the same from any shell.
"""

from __future__ import annotations

import os
import sys

import click

from seedbed._hashseed import fixed_env, hash_seed_is_fixed


@click.group()
@click.version_option(package_name="seedbed")
def cli() -> None:
    """Deterministic simulation testing for Python."""


def _register_commands() -> None:
    from seedbed.check._cli import check_history

    cli.add_command(check_history)


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
