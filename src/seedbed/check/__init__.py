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

Transactional histories (list-append, rw-register) are checked Elle's way
with `check_transactions`: dependencies inferred from reads, cycles found in
the dependency graph, a verdict per consistency model:

    verdict = check_transactions(history, "list-append", consistency="serializable")
    assert verdict, verdict.explain()
"""

from seedbed.check._assertions import always, reachable, sometimes, unreachable
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
)
from seedbed.check._parsers import (
    detect_format,
    parse_history,
    parse_jepsen_log,
    parse_kv_log,
    read_history,
)
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

__all__ = [
    "CONSISTENCY_MODELS",
    "ILLEGAL",
    "MODELS",
    "PROHIBITED",
    "TXN_MODELS",
    "Anomaly",
    "CasRegister",
    "Event",
    "History",
    "HistoryError",
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
    "Verdict",
    "always",
    "cas_register",
    "check_transactions",
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
    "parse_txn_history",
    "reachable",
    "read_history",
    "read_jsonl",
    "read_txn_history",
    "register",
    "sometimes",
    "txns_from_history",
    "unreachable",
]
