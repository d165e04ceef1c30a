"""``seedbed check-history --model list-append|rw-register``: transaction histories.

One line per file, as for linearizability: the verdict for the models asked
with ``--consistency`` (default strict-serializable), the anomaly classes
found and the time. ``--json`` prints one object per file (every model's
status and every anomaly explained); ``--explain`` prints, indented, each
anomaly's transactions and the edges of its cycle, and which models the
history rules out. Exit codes are the command's: 0 valid, 1 some file
invalid, 3 none invalid but some undecided, 2 bad input.
"""

from __future__ import annotations

import json

from seedbed.check._txn_history import TxnModel, read_txn_history
from seedbed.check._txn_verdict import TxnOutcome, TxnVerdict, check_transactions
from seedbed.cli._guard import echo
from seedbed.errors import UsageError


def check_txn_file(
    path: str,
    model: TxnModel,
    consistency: tuple[str, ...],
    timeout: float | None,
    allow_empty: bool = False,
) -> TxnVerdict | str:
    """The verdict for one file, or the one-line message describing bad input."""
    try:
        history = read_txn_history(path, model)
        if not len(history) and not allow_empty:
            return f"{path}: the history holds no transactions: nothing to check (did it record?)"
        return check_transactions(
            history,
            consistency=consistency or "strict-serializable",
            timeout=timeout,
            allow_empty=allow_empty,
        )
    except UsageError as exc:
        return str(exc)
    except RecursionError:
        return f"{path}: nested too deeply to read"


def report_txn(path: str, verdict: TxnVerdict, as_json: bool, explain: bool) -> None:
    """Print one file's verdict (and, with ``explain``, why)."""
    if as_json:
        obj = {"file": path, **verdict.to_json()}
        echo(json.dumps(obj))
        return
    if verdict.outcome is TxnOutcome.VACUOUS:
        wanted = ", ".join(verdict.consistency)
        hint = " (--allow-empty accepts it)"
        echo(f"{path}: cannot show {wanted}: {verdict.reason}{hint} ({verdict.seconds:.3f} s)")
        return
    names = verdict.anomaly_names()
    found = f" [{', '.join(names)}]" if names else ""
    wanted = ", ".join(verdict.consistency)
    echo(f"{path}: {verdict.outcome} for {wanted}{found} ({verdict.seconds:.3f} s)")
    if explain and (verdict.outcome is not TxnOutcome.VALID or names):
        for line in verdict.explain().splitlines()[1:]:
            echo(f"    {line}")
