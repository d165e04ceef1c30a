"""``seedbed check-history``: verdicts for history files.

One line per file, in the order given; ``--json`` makes each line a JSON
object ``{"file", "verdict", "seconds"}``; ``--explain`` follows a failing
file's line with its explanation, indented. The exit status summarizes them
all: 0 every file passed, 1 some file refused, or vacuous (nothing in it
could have been refused: no read succeeded; ``--allow-empty`` passes such
files), 3 none refused but some unknown (timed out, or past
``--max-memory``), 2 bad input (with a one-line message naming file and line
on stderr; the other files are still checked and reported).

Linearizability models are checked here, transactions in `_txn`, sets,
queues, counters and unique ids in `_collection`.
"""

from __future__ import annotations

import json
import sys

import click

from seedbed.check._collections import COLLECTION_MODELS
from seedbed.check._history import History
from seedbed.check._linearizability import Outcome, Verdict, linearizable
from seedbed.check._memory import limit_memory
from seedbed.check._models import MODELS, ModelError
from seedbed.check._parsers import read_history
from seedbed.check._txn_history import TXN_MODELS
from seedbed.check._txn_verdict import CONSISTENCY_MODELS, TxnOutcome
from seedbed.check._verdict import Validity
from seedbed.cli._collection import ALLOW_HINT, check_collection_file, report_collection
from seedbed.cli._guard import echo
from seedbed.cli._txn import check_txn_file, report_txn
from seedbed.errors import UsageError

EXIT_OK, EXIT_NOT_LINEARIZABLE, EXIT_BAD_INPUT, EXIT_UNKNOWN = 0, 1, 2, 3


def _model_error_line(history: History, error: ModelError) -> str:
    line = history[error.op.call].line
    where = history.source if line is None else f"{history.source}:{line}"
    return f"{where}: {error}"


# An empty history is bad input, not a verdict: "linearizable" would be
# vacuously true, and an empty file is far likelier a recorder that wrote
# nothing (a wrong path, a crash before the first flush) than a check passed.
_NOTHING = "{path}: the history holds no operations: nothing to check (did the recording run?)"


def _check_file(
    path: str, model_name: str, timeout: float | None, explain: bool, allow_empty: bool
) -> Verdict | str:
    """The verdict for one file, or the one-line message describing bad input."""
    history: History | None = None
    try:
        history = read_history(path)
        if not len(history) and not allow_empty:
            return _NOTHING.format(path=path)
        model = MODELS[model_name]()
        return linearizable(history, model, timeout, witness=explain, allow_empty=allow_empty)
    except MemoryError:  # past --max-memory: undecided, like a timeout
        return Verdict(Outcome.UNKNOWN, 0.0)
    except ModelError as exc:
        assert history is not None
        return _model_error_line(history, exc)
    except UsageError as exc:
        return str(exc) if history is None else f"{path}: {exc}"


def _report(path: str, verdict: Verdict, as_json: bool, explain: bool) -> None:
    if as_json:
        obj = {"file": path, "verdict": str(verdict.outcome), "seconds": round(verdict.seconds, 6)}
        if verdict.reason is not None:
            obj["reason"] = verdict.reason
        echo(json.dumps(obj))
    elif verdict.outcome is Outcome.VACUOUS:
        line = f"cannot show linearizability: {verdict.reason}"
        echo(f"{path}: {line}{ALLOW_HINT} ({verdict.seconds:.3f} s)")
    else:
        echo(f"{path}: {verdict.outcome} ({verdict.seconds:.3f} s)")
    if explain and verdict.outcome is Outcome.NOT_LINEARIZABLE:
        for line in verdict.explain().splitlines()[1:]:
            echo(f"    {line}")


@click.command("check-history")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--model",
    "model_name",
    required=True,
    type=click.Choice(sorted(MODELS) + list(TXN_MODELS) + list(COLLECTION_MODELS)),
    help="Sequential model: cas-register for etcd logs, kv for key-value maps; "
    "list-append or rw-register for transaction histories; set, queue, counter or "
    "unique-ids for Jepsen's set-full, total-queue, counter and unique-ids checks.",
)
@click.option(
    "--consistency",
    multiple=True,
    type=click.Choice(CONSISTENCY_MODELS),
    help="Transaction histories: the model(s) to check (default strict-serializable).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
@click.option(
    "--explain",
    is_flag=True,
    help="Under a failing file, name the operations that cannot be ordered.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds per file before the verdict is 'unknown'.",
)
@click.option(
    "--max-memory",
    type=click.IntRange(min=1),
    default=None,
    metavar="MB",
    help="Memory (address space, MB) the check may use; past it the verdict is 'unknown'.",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Pass a history that cannot show the property (no read, no dequeue succeeded; "
    "an empty file) instead of failing it.",
)
def check_history(
    files: tuple[str, ...],
    model_name: str,
    consistency: tuple[str, ...],
    as_json: bool,
    explain: bool,
    timeout: float | None,
    max_memory: int | None,
    allow_empty: bool,
) -> None:
    """Check that each history FILE is linearizable under --model.

    The format (Jepsen log, Clojure maps, seedbed JSON Lines) is recognized
    from the content. Exit 0: all pass; 1: some refused, or unable to show
    the property (no operation the model checks succeeded: no read, no
    dequeue; --allow-empty passes those); 3: none refused, some unknown
    (--timeout or --max-memory reached); 2: bad input. --explain adds,
    indented under a failing file, a smallest set of operations that cannot
    all be ordered and the longest legal order found. With --model
    list-append or rw-register, files are transaction histories (Jepsen EDN
    or JSON Lines) checked for anomalies against --consistency; --explain
    prints each anomaly's transactions and cycle. With --model set, queue,
    counter or unique-ids (Jepsen EDN or JSON Lines), --explain lists what
    was lost, duplicated or invented, with the operations that show it.
    """
    if consistency and model_name not in TXN_MODELS:
        echo("error: --consistency applies to --model list-append or rw-register", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if max_memory is not None:
        try:
            limit_memory(max_memory)
        except UsageError as exc:
            echo(f"error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
    outcomes: set[Outcome] = set()
    bad_input = False
    for path in files:
        if model_name in COLLECTION_MODELS:
            checked = check_collection_file(path, model_name, allow_empty)
            if isinstance(checked, str):
                echo(f"error: {checked}", err=True)
                bad_input = True
                continue
            outcomes.add(_COLLECTION_OUTCOMES[checked.outcome])
            report_collection(path, checked, as_json, explain)
            continue
        if model_name in TXN_MODELS:
            txn = check_txn_file(path, model_name, consistency, timeout, allow_empty)  # type: ignore[arg-type]
            if isinstance(txn, str):
                echo(f"error: {txn}", err=True)
                bad_input = True
                continue
            outcomes.add(_TXN_OUTCOMES[txn.outcome])
            report_txn(path, txn, as_json, explain)
            continue
        result = _check_file(path, model_name, timeout, explain, allow_empty)
        if isinstance(result, str):
            echo(f"error: {result}", err=True)
            bad_input = True
            continue
        outcomes.add(result.outcome)
        _report(path, result, as_json, explain)
    sys.exit(_exit_code(outcomes, bad_input))


_TXN_OUTCOMES = {
    TxnOutcome.VALID: Outcome.LINEARIZABLE,
    TxnOutcome.INVALID: Outcome.NOT_LINEARIZABLE,
    TxnOutcome.UNKNOWN: Outcome.UNKNOWN,
    TxnOutcome.VACUOUS: Outcome.VACUOUS,
}
_COLLECTION_OUTCOMES = {
    Validity.VALID: Outcome.LINEARIZABLE,
    Validity.INVALID: Outcome.NOT_LINEARIZABLE,
    Validity.VACUOUS: Outcome.VACUOUS,
}


def _exit_code(outcomes: set[Outcome], bad_input: bool) -> int:
    if bad_input:
        return EXIT_BAD_INPUT
    if Outcome.NOT_LINEARIZABLE in outcomes or Outcome.VACUOUS in outcomes:
        return EXIT_NOT_LINEARIZABLE
    if Outcome.UNKNOWN in outcomes:
        return EXIT_UNKNOWN
    return EXIT_OK
