"""`seedbed failures`: the failure database (`.seedbed/failures`), listed and cleared.

A thin shell over `seedbed._harness.failures`: without TARGET it lists the
targets that keep saved failures; with one, each failure and the command
that replays it; `--clear` removes a target's (or, with `--all`, every
target's). A damaged entry is a one-line error (exit 2) naming it; clearing
removes damaged entries too.
"""

from __future__ import annotations

import json
import shutil

import click

from seedbed._harness.failures._db import ROOT, FailureDB, saved_targets
from seedbed.cli._group import usage_error
from seedbed.cli._guard import echo
from seedbed.errors import UsageError


@click.command()
@click.argument("target", required=False)
@click.option("--clear", is_flag=True,
              help="remove TARGET's saved failures (with --all: every target's)")  # fmt: skip
@click.option("--all", "every", is_flag=True, help="with --clear: every target's saved failures")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead")
def failures(target: str | None, clear: bool, every: bool, as_json: bool) -> None:
    """List (or clear) the failures saved in .seedbed/failures, replayed first by
    `sweep`, `explore` and the pytest plugin until they pass."""
    if every and (target is not None or not clear):
        usage_error("--all goes with --clear and no TARGET: seedbed failures --clear --all")
    if clear and target is None and not every:
        usage_error("--clear needs a TARGET (or --all to clear every target's saved failures)")
    try:
        if clear:
            _clear(target, as_json)
        elif target is None:
            _list_targets(as_json)
        else:
            _list(target, as_json)
    except UsageError as exc:
        usage_error(str(exc))


def _clear(target: str | None, as_json: bool) -> None:
    if target is None:
        counted = saved_targets()
        removed = sum(count for _, count in counted)
        if ROOT.is_dir() and not ROOT.is_symlink():
            shutil.rmtree(ROOT)
        told = f"cleared {removed} saved failures of {len(counted)} targets"
    else:
        removed = FailureDB(target).clear()
        told = f"cleared {removed} saved failure{'s' if removed != 1 else ''} of {target}"
    echo(json.dumps({"cleared": removed}) if as_json else told)


def _list_targets(as_json: bool) -> None:
    counted = saved_targets()
    if as_json:
        echo(json.dumps({"folder": str(ROOT), "targets": dict(counted)}, sort_keys=True))
        return
    if not counted:
        echo(f"no saved failures in {ROOT}")
        return
    echo(f"saved failures in {ROOT} (seedbed failures TARGET lists one target's):")
    for name, count in counted:
        echo(f"  {name}: {count}")


def _list(target: str, as_json: bool) -> None:
    db = FailureDB(target)
    entries = db.entries()
    if as_json:
        rows = [{"file": str(e.path), "seed": e.seed, "options": e.options,
                 "found_by": e.found_by, "bucket": e.bucket(), "replay": e.replay}
                for e in entries]  # fmt: skip
        echo(json.dumps({"target": target, "folder": str(db.folder), "failures": rows}))
        return
    if not entries:
        echo(f"no saved failures of {target} (in {db.folder})")
        return
    echo(f"{len(entries)} saved failure{'s' if len(entries) != 1 else ''} of {target} "
         f"(in {db.folder}), replayed first until each passes:")  # fmt: skip
    for entry in entries:
        options = " ".join(f"{k}={v}" for k, v in entry.options.items())
        echo(f"  {entry.describe()}, found by {entry.found_by}"
             f"{' under ' + options if options else ''}: {entry.bucket()}")  # fmt: skip
        echo(f"       replay: {entry.replay}")
