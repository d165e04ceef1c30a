"""Checking what clients saw: linearizability of recorded histories.

Invariants say what must hold inside a system; a history checker says
whether what its clients observed could have come from a correct one. Record
operations with `Recorder` (or read a history from a file with
`read_history`), then ask `linearizable(history, model)`:

    verdict = linearizable(history, cas_register(), timeout=10)
    assert verdict, verdict.explain()

Assertions inside a run (`always`, `sometimes`, `reachable`,
`unreachable`) are the oracles code carries with it; each run keeps a catalog
of them (see `seedbed.check._assertions`). `eventually` and `leads_to` are
bounded temporal properties a Scenario checks with its invariants, while
faults go on (`seedbed.check._temporal`).

Models: `register`, `cas_register`, `kv`, or any object following `Model`.

Sets, queues, counters and id generators are checked as Jepsen's set-full,
total-queue, counter and unique-ids do, in one pass each: `check_set`,
`check_queue`, `check_counter`, `check_unique_ids` (or `check_collection`
by name) return a `CheckVerdict` naming what was lost, duplicated or
invented, with the operations that show it.

No false greens: a history that could not have been refused (no read, no
dequeue succeeded) is *vacuous*, and no checker passes it unless told to
(``allow_empty=True``). `HistoryOracle` is a `Recorder` that a scenario
checks when its run ends (``Scenario(checks=[oracle])``).

Transactional histories (list-append, rw-register) are checked Elle's way
with `check_transactions`: dependencies inferred from reads, cycles found in
the dependency graph, a verdict per consistency model:

    verdict = check_transactions(history, "list-append", consistency="serializable")
    assert verdict, verdict.explain()
"""

from seedbed.check._assertions import always, reachable, sometimes, unreachable
from seedbed.check._collections import COLLECTION_MODELS, check_collection
from seedbed.check._counter import check_counter
from seedbed.check._coverage import coverage, maximize, minimize
from seedbed.check._history import (
    Event,
    History,
    HistoryError,
    Operation,
    Recorder,
    parse_jsonl,
    read_jsonl,
)
from seedbed.check._linearizability import Outcome, Verdict, linearizable
from seedbed.check._models import (
    ILLEGAL,
    MODELS,
    CasRegister,
    KeyValue,
    Model,
    ModelError,
    Register,
    cas_register,
    kv,
    register,
    vacuous_reason,
)
from seedbed.check._op_parsers import parse_op_history, read_op_history
from seedbed.check._oracle import HistoryOracle
from seedbed.check._parsers import (
    detect_format,
    parse_history,
    parse_jepsen_log,
    parse_kv_log,
    read_history,
)
from seedbed.check._queue import check_queue
from seedbed.check._set import check_set
from seedbed.check._temporal import eventually, leads_to
from seedbed.check._txn_history import (
    TXN_MODELS,
    Txn,
    TxnHistory,
    parse_txn_history,
    read_txn_history,
    txns_from_history,
)
from seedbed.check._txn_infer import Anomaly
from seedbed.check._txn_verdict import (
    CONSISTENCY_MODELS,
    PROHIBITED,
    TxnOutcome,
    TxnVerdict,
    check_transactions,
)
from seedbed.check._unique import check_unique_ids
from seedbed.check._verdict import CheckVerdict, Finding, Validity

__all__ = [
    "COLLECTION_MODELS",
    "CONSISTENCY_MODELS",
    "ILLEGAL",
    "MODELS",
    "PROHIBITED",
    "TXN_MODELS",
    "Anomaly",
    "CasRegister",
    "CheckVerdict",
    "Event",
    "Finding",
    "History",
    "HistoryError",
    "HistoryOracle",
    "KeyValue",
    "Model",
    "ModelError",
    "Operation",
    "Outcome",
    "Recorder",
    "Register",
    "Txn",
    "TxnHistory",
    "TxnOutcome",
    "TxnVerdict",
    "Validity",
    "Verdict",
    "always",
    "cas_register",
    "check_collection",
    "check_counter",
    "check_queue",
    "check_set",
    "check_transactions",
    "check_unique_ids",
    "coverage",
    "detect_format",
    "eventually",
    "kv",
    "leads_to",
    "linearizable",
    "maximize",
    "minimize",
    "parse_history",
    "parse_jepsen_log",
    "parse_jsonl",
    "parse_kv_log",
    "parse_op_history",
    "parse_txn_history",
    "reachable",
    "read_history",
    "read_jsonl",
    "read_op_history",
    "read_txn_history",
    "register",
    "sometimes",
    "txns_from_history",
    "unreachable",
    "vacuous_reason",
]
