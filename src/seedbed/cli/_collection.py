"""``seedbed check-history --model set|queue|counter|unique-ids``: the collection checkers.

One line per file, as for the other models: the verdict, the tallies and
the time; a vacuous history (nothing could have refused it) says why it
cannot show the property. ``--json`` prints one object per file (every
finding with its operations); ``--explain`` lists, indented, each finding
(lost, duplicated, unexpected, stale, never-read, out-of-bounds) with its
operations and their source lines. Exit codes are the command's.
"""

from __future__ import annotations

import json

from seedbed.check._collections import check_collection
from seedbed.check._op_parsers import read_op_history
from seedbed.check._verdict import CheckVerdict, Validity
from seedbed.cli._guard import echo
from seedbed.errors import UsageError

ALLOW_HINT = " (--allow-empty accepts it)"


def check_collection_file(path: str, model: str, allow_empty: bool) -> CheckVerdict | str:
    """The verdict for one file, or the one-line message describing bad input."""
    try:
        history = read_op_history(path)
        if not len(history) and not allow_empty:
            return f"{path}: the history holds no operations: nothing to check (did it record?)"
        return check_collection(history, model, allow_empty=allow_empty)
    except UsageError as exc:
        return str(exc)


def report_collection(path: str, verdict: CheckVerdict, as_json: bool, explain: bool) -> None:
    """Print one file's verdict (and, with ``explain``, its findings)."""
    if as_json:
        echo(json.dumps({"file": path, **verdict.to_json()}))
        return
    hint = ALLOW_HINT if verdict.outcome is Validity.VACUOUS else ""
    echo(f"{path}: {verdict.headline()}{hint} ({verdict.seconds:.3f} s)")
    if explain and verdict.findings:
        for line in verdict.explain().splitlines()[1:]:
            echo(f"    {line}")
