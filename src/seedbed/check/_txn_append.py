"""List-append inference: version orders from reads, then ww/wr/rw edges.

See `_txn_infer` for the rules. Each key's version order is its longest
committed read; appends no read shows come after its last element. This
module also finds the anomalies visible without a cycle: reads of values
nobody appended (garbage), of an element twice (a duplicated append), of a
failed transaction's append (G1a), of a transaction's non-final append to a
key (G1b); orders that cannot come from one list (incompatible-order, which
includes a transaction's own appends split or reordered); a committed append
placed after a failed one (dirty update); a transaction whose reads
contradict its own earlier operations (internal) or show an append it makes
only later (future read).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from seedbed.check._txn_history import Txn
from seedbed.check._txn_history import format_value as fv
from seedbed.check._txn_infer import INIT, KIND_BITS, RW, WR, WW, Anomaly, Inference

Key = Hashable
Read = tuple[int, Key, tuple[Any, ...]]


def infer_list_append(inference: Inference) -> None:
    """Fill ``inference`` with the list-append edges and direct anomalies."""
    txns = inference.history.txns
    reads: list[Read] = [
        (t.id, k, tuple(v or ()))
        for t in txns
        if t.status == "ok"
        for f, k, v in t.mops
        if f == "r"
    ]
    orders, longest_by = _longest_reads(reads)
    found = inference.direct
    found.extend(_incompatible_reads(reads, orders, longest_by))
    # Reads that are prefixes of a clean longest read need no element-wise look.
    suspect = {key for key, order in orders.items() if _unclean(inference, key, order)}
    intermediate = _intermediate_appends(txns)
    for reader, key, value in reads:
        if not value:
            continue
        if key in suspect or orders[key][: len(value)] != value:
            found.extend(_read_anomalies(inference, txns[reader], key, value))
        if (key, value[-1]) in intermediate:
            found.extend(_intermediate_read(inference, reader, key, value))
    for txn in txns:
        if txn.status == "ok":
            found.extend(_internal(txn))
    for key, order in orders.items():
        found.extend(_order_anomalies(inference, key, order))
    _add_edges(inference, reads, orders)


def _longest_reads(reads: list[Read]) -> tuple[dict[Key, tuple[Any, ...]], dict[Key, int]]:
    orders: dict[Key, tuple[Any, ...]] = {}
    longest_by: dict[Key, int] = {}
    for reader, key, value in reads:
        if len(value) > len(orders.get(key, ())):
            orders[key] = value
            longest_by[key] = reader
    return orders, longest_by


def _incompatible_reads(
    reads: list[Read], orders: dict[Key, tuple[Any, ...]], longest_by: dict[Key, int]
) -> list[Anomaly]:
    found: list[Anomaly] = []
    reported: set[tuple[Key, tuple[Any, ...]]] = set()
    for reader, key, value in reads:
        longest = orders.get(key, ())
        if longest[: len(value)] != value and (key, value) not in reported:
            reported.add((key, value))
            other = longest_by[key]
            text = (
                f"T{reader} read key {fv(key)} = {fv(value)} and T{other} read it = {fv(longest)}: "
                "neither is a prefix of the other, so the list had no single history"
            )
            found.append(Anomaly("incompatible-order", (reader, other), text))
    return found


def _unclean(inference: Inference, key: Key, order: tuple[Any, ...]) -> bool:
    """Whether a key's longest read repeats, or shows a value no committed write made."""
    txns = inference.history.txns
    writer = inference.writer
    if len(set(order)) != len(order):
        return True
    for element in order:
        w = writer.get((key, element))
        if w is None or txns[w].status == "fail":
            return True
    return False


def _intermediate_appends(txns: tuple[Txn, ...]) -> set[tuple[Key, Any]]:
    """(key, value) of every append followed by another of the same transaction to that key."""
    out = set()
    for txn in txns:
        last: dict[Key, Any] = {}
        for f, key, value in txn.mops:
            if f != "r":
                if key in last:
                    out.add((key, last[key]))
                last[key] = value
    return out


def _intermediate_read(
    inference: Inference, reader: int, key: Key, value: tuple[Any, ...]
) -> list[Anomaly]:
    last = value[-1]
    w = inference.writer[(key, last)]
    if w == reader:
        return []
    own = [v for f, k, v in inference.history.txns[w].mops if f != "r" and k == key]
    text = (
        f"T{reader} read key {fv(key)} = {fv(value)}, ending in {fv(last)}; "
        f"T{w} appended {fv(last)} and then {fv(own[own.index(last) + 1])} to it, "
        f"so T{reader} saw T{w}'s intermediate state"
    )
    return [Anomaly("G1b", (w, reader), text)]


def _read_anomalies(
    inference: Inference, reader: Txn, key: Key, value: tuple[Any, ...]
) -> list[Anomaly]:
    txns = inference.history.txns
    found = []
    if len(set(value)) != len(value):
        twice = next(e for i, e in enumerate(value) if e in value[:i])
        text = (
            f"T{reader.id} read key {fv(key)} = {fv(value)}: {fv(twice)} appears twice, "
            "but was appended once"
        )
        found.append(Anomaly("duplicate-append", (reader.id,), text))
    for element in value:
        w = inference.writer.get((key, element))
        if w is None:
            text = (
                f"T{reader.id} read key {fv(key)} = {fv(value)}: "
                f"nobody appended {fv(element)} to {fv(key)}"
            )
            found.append(Anomaly("garbage-read", (reader.id,), text))
        elif txns[w].status == "fail":
            text = (
                f"T{reader.id} read key {fv(key)} = {fv(value)}, which includes {fv(element)}, "
                f"appended by T{w}, which failed (aborted)"
            )
            found.append(Anomaly("G1a", (w, reader.id), text))
    return found


def _internal(txn: Txn) -> list[Anomaly]:
    """Reads that contradict the transaction's own earlier reads and appends."""
    appended = {k for f, k, _ in txn.mops if f != "r"}
    read = [k for f, k, _ in txn.mops if f == "r"]
    if appended.isdisjoint(read) and len(set(read)) == len(read):
        return []  # nothing in the transaction constrains its own reads
    found = []
    state: dict[Key, tuple[bool, tuple[Any, ...]]] = {}
    own_at: dict[tuple[Key, Any], int] = {}
    for index, (f, key, value) in enumerate(txn.mops):
        if f != "r":
            own_at.setdefault((key, value), index)
    for index, (f, key, value) in enumerate(txn.mops):
        if f != "r":
            known, expected = state.get(key, (False, ()))
            state[key] = (known, (*expected, value))
            continue
        seen = tuple(value or ())
        later = [e for e in seen if own_at.get((key, e), -1) > index]
        if later:
            text = (
                f"T{txn.id} read key {fv(key)} = {fv(seen)}, which shows {fv(later[0])}, "
                f"an append T{txn.id} makes only later"
            )
            found.append(Anomaly("future-read", (txn.id,), text))
        elif key in state and not _consistent(state[key], seen):
            known, expected = state[key]
            shape = fv(expected) if known else f"a list ending in {fv(expected)}"
            text = (
                f"T{txn.id} read key {fv(key)} = {fv(seen)}, "
                f"but its own earlier operations on it make it {shape}"
            )
            found.append(Anomaly("internal", (txn.id,), text))
        state[key] = (True, seen)
    return found


def _consistent(expected: tuple[bool, tuple[Any, ...]], seen: tuple[Any, ...]) -> bool:
    known, values = expected
    if known:
        return seen == values
    return len(seen) >= len(values) and seen[len(seen) - len(values) :] == values


def _order_anomalies(inference: Inference, key: Key, order: tuple[Any, ...]) -> list[Anomaly]:
    """A writer's own appends split or reordered; a committed append after a failed one."""
    txns = inference.history.txns
    found = []
    failed_at: int | None = None
    for i, element in enumerate(order):
        w = inference.writer.get((key, element))
        if w is None:
            continue
        if txns[w].status == "fail":
            failed_at = i if failed_at is None else failed_at
            continue
        if txns[w].status == "ok" and failed_at is not None:
            fw = inference.writer[(key, order[failed_at])]
            text = (
                f"key {fv(key)} reads as {fv(order)}: T{w}'s committed append of {fv(element)} "
                f"came after {fv(order[failed_at])}, appended by T{fw}, which failed"
            )
            found.append(Anomaly("dirty-update", (fw, w), text))
            failed_at = None
        own = [v for f, k, v in txns[w].mops if f != "r" and k == key]
        j = own.index(element)
        before_ok = j == 0 or (i > 0 and order[i - 1] == own[j - 1])
        after_ok = j + 1 == len(own) or i + 1 == len(order) or order[i + 1] == own[j + 1]
        if not (before_ok and after_ok):
            text = (
                f"T{w} appended {fv(tuple(own))} to key {fv(key)} in that order, "
                f"in one transaction, but the key reads as {fv(order)}"
            )
            found.append(Anomaly("incompatible-order", (w,), text))
    return found


def _add_edges(inference: Inference, reads: list[Read], orders: dict[Key, tuple[Any, ...]]) -> None:
    """The ww, wr and rw edges, from each key's version order.

    Indexes are per key (a dict of dicts, no (key, value) tuple per element):
    at a million transactions the tuples alone were a tenth of the memory.
    """
    txns = inference.history.txns
    writer = inference.writer
    out = inference.out
    inference.orders = orders  # what explains a ww or rw edge later (`Inference.before`)
    positions: dict[Key, dict[Any, int]] = {}
    readers: dict[Key, dict[Any, list[int]]] = {}
    for reader, key, value in reads:
        last = value[-1] if value else INIT
        by_last = readers.get(key)
        if by_last is None:
            by_last = readers[key] = {}
        seen_by = by_last.get(last)
        if seen_by is None:
            by_last[last] = [reader]
        else:
            seen_by.append(reader)
        w = writer.get((key, last)) if value else None
        if w is not None and w != reader and txns[w].status != "fail":
            out[w].append(reader << KIND_BITS | WR)  # inference.add, inlined: runs per read
    for t in inference.nodes:
        for f, key, value in txns[t].mops:
            if f == "r":
                continue
            order = orders.get(key, ())
            at = _position(positions, key, order).get(value)
            if at is None:
                before = order[-1] if order else INIT
            else:
                before = order[at - 1] if at > 0 else INIT
            a = None if before is INIT else writer.get((key, before))
            if a is not None and a != t and txns[a].status != "fail":
                out[a].append(t << KIND_BITS | WW)
            by_last = readers.get(key)
            packed = t << KIND_BITS | RW
            for r in by_last.get(before, ()) if by_last is not None else ():
                if r != t:
                    out[r].append(packed)


def _position(
    positions: dict[Key, dict[Any, int]], key: Key, order: tuple[Any, ...]
) -> dict[Any, int]:
    """Each element's first index in ``key``'s version order, built on first use."""
    found = positions.get(key)
    if found is None:
        found = positions[key] = {}
        for i, element in enumerate(order):
            found.setdefault(element, i)
    return found
