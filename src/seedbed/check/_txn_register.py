"""rw-register inference: what reads and overwrites reveal of version orders.

A register read names the one write it saw, so ``wr`` edges are certain.
Version orders are only partly known: the initial state precedes every
write, and a committed transaction that read (or wrote) a key and then wrote
it again shows that the first version came before its write. From those
pairs come ``ww`` edges (writer of the earlier -> writer of the later) and
``rw`` edges (readers of the earlier -> writer of the later). Pairs that
form a cycle on one key are themselves an anomaly (cyclic-versions).

Direct anomalies: a read of a value nobody wrote (garbage), of a failed
write (G1a), of a value its writer overwrote in the same transaction (G1b),
and reads contradicting the transaction's own earlier reads and writes
(internal).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from seedbed.check._txn_cycles import strongly_connected
from seedbed.check._txn_history import Txn
from seedbed.check._txn_history import format_value as fv
from seedbed.check._txn_infer import INIT, RW, WR, WW, Anomaly, Inference

Key = Hashable


def infer_rw_register(inference: Inference) -> None:
    """Fill ``inference`` with the rw-register edges and direct anomalies."""
    txns = inference.history.txns
    readers: dict[tuple[Key, Any], list[int]] = {}
    pairs: dict[Key, list[tuple[Any, Any]]] = {}
    for txn in txns:
        if txn.status == "ok":
            inference.direct.extend(_read_anomalies(inference, txn))
            inference.direct.extend(_internal(txn))
            _observe(inference, txn, readers, pairs)
        elif txn.status == "info":
            _observe_writes(txn, pairs)
    for key, ordered in pairs.items():
        inference.direct.extend(_cyclic_versions(inference, key, ordered))
    _add_edges(inference, readers, pairs)


def _observe(
    inference: Inference,
    txn: Txn,
    readers: dict[tuple[Key, Any], list[int]],
    pairs: dict[Key, list[tuple[Any, Any]]],
) -> None:
    """Record ``txn``'s reads (with their wr edges) and its version pairs."""
    current: dict[Key, Any] = {}
    for f, key, value in txn.mops:
        if f == "r":
            seen = INIT if value is None else value
            readers.setdefault((key, seen), []).append(txn.id)
            w = inference.writer.get((key, seen))
            if w is not None and inference.history.txns[w].status != "fail":
                inference.add(w, txn.id, WR)
            current.setdefault(key, seen)
        else:
            if key in current and current[key] is not INIT:
                pairs.setdefault(key, []).append((current[key], value))
            current[key] = value


def _observe_writes(txn: Txn, pairs: dict[Key, list[tuple[Any, Any]]]) -> None:
    """An unknown transaction's successive writes to one key are still ordered."""
    current: dict[Key, Any] = {}
    for f, key, value in txn.mops:
        if f == "w":
            if key in current:
                pairs.setdefault(key, []).append((current[key], value))
            current[key] = value


def _read_anomalies(inference: Inference, reader: Txn) -> list[Anomaly]:
    txns = inference.history.txns
    found = []
    for f, key, value in reader.mops:
        if f != "r" or value is None:
            continue
        w = inference.writer.get((key, value))
        if w is None:
            text = f"T{reader.id} read key {fv(key)} = {fv(value)}, which nobody wrote"
            found.append(Anomaly("garbage-read", (reader.id,), text))
        elif txns[w].status == "fail":
            text = f"T{reader.id} read key {fv(key)} = {fv(value)}, written by T{w}, which failed"
            found.append(Anomaly("G1a", (w, reader.id), text))
        elif w != reader.id:
            own = [v for g, k, v in txns[w].mops if g == "w" and k == key]
            if own[-1] != value:
                text = (
                    f"T{reader.id} read key {fv(key)} = {fv(value)}, which T{w} overwrote "
                    f"with {fv(own[-1])} in the same transaction (an intermediate state)"
                )
                found.append(Anomaly("G1b", (w, reader.id), text))
    return found


def _internal(txn: Txn) -> list[Anomaly]:
    found = []
    state: dict[Key, Any] = {}
    for f, key, value in txn.mops:
        seen = INIT if value is None else value
        if f == "r" and key in state and state[key] != seen:
            expected = "nil" if state[key] is INIT else fv(state[key])
            text = (
                f"T{txn.id} read key {fv(key)} = {fv(value)}, "
                f"but its own earlier operations on it make it {expected}"
            )
            found.append(Anomaly("internal", (txn.id,), text))
        state[key] = seen
    return found


def _cyclic_versions(
    inference: Inference, key: Key, ordered: list[tuple[Any, Any]]
) -> list[Anomaly]:
    numbers: dict[Any, int] = {}
    for x, y in ordered:
        numbers.setdefault(x, len(numbers))
        numbers.setdefault(y, len(numbers))
    values = list(numbers)
    succ: list[list[int]] = [[] for _ in values]
    for x, y in ordered:
        succ[numbers[x]].append(numbers[y])
    found = []
    for component in strongly_connected(range(len(values)), succ.__getitem__):
        if len(component) > 1:
            shown = ", ".join(fv(values[i]) for i in sorted(component))
            writers = tuple(
                sorted(
                    {
                        inference.writer[(key, values[i])]
                        for i in component
                        if (key, values[i]) in inference.writer
                    }
                )
            )
            text = (
                f"on key {fv(key)}, transactions that read and then overwrote it "
                f"order the versions {shown} in a cycle"
            )
            found.append(Anomaly("cyclic-versions", writers, text))
    return found


def _add_edges(
    inference: Inference,
    readers: dict[tuple[Key, Any], list[int]],
    pairs: dict[Key, list[tuple[Any, Any]]],
) -> None:
    txns = inference.history.txns
    writes_by_key: dict[Key, list[tuple[Any, int]]] = {}
    for t in inference.nodes:
        for f, key, value in txns[t].mops:
            if f == "w":
                writes_by_key.setdefault(key, []).append((value, t))
                inference.prev.setdefault((key, value), (INIT,))
    for key, writes in writes_by_key.items():
        for r in readers.get((key, INIT), ()):
            for _, t in writes:
                inference.add(r, t, RW)
    for key, ordered in pairs.items():
        for x, y in ordered:
            a, b = inference.writer.get((key, x)), inference.writer.get((key, y))
            if b is None or txns[b].status == "fail":
                continue
            inference.prev[(key, y)] = (*inference.prev.get((key, y), (INIT,)), x)
            if a is not None and txns[a].status != "fail":
                inference.add(a, b, WW)
            for r in readers.get((key, x), ()):
                inference.add(r, b, RW)
