"""Inference: from what transactions read, the dependencies between them.

With list-append, every read returns the whole list, so it reveals the
order in which the versions of its key were installed. Per key, the longest
read is taken as the version order; every other read must be a prefix of it
(otherwise the history shows two incompatible orders). A committed append
that no read shows must come after the longest read's last element (lists
only grow), which places it too. From these orders, between transactions
that committed (``ok``, or ``info`` ones: an unobserved ``info`` can only be
a sink, so counting it does no harm):

- ``ww`` T1 -> T2: T2 appended the element right after T1's on some key;
- ``wr`` T1 -> T2: T2 read a list whose last element T1 appended;
- ``rw`` T1 -> T2: T1 read a list that T2's append came right after
  (an anti-dependency: T1 did not see T2's write);
- ``realtime`` T1 -> T2: T1 completed before T2 was invoked (kept to a
  transitive reduction: only the ones not implied by others);
- ``process`` T1 -> T2: T1 committed and was the previous transaction of
  T2's client.

rw-register reads reveal less: a read names the write it saw, and the
version order is only known where a transaction read a value and then
overwrote it, and from the initial state (which precedes every write).

Anomalies that need no cycle are found here directly: garbage reads,
duplicated elements, incompatible orders, reads of failed writes (G1a),
intermediate reads (G1b), dirty updates, internal inconsistency and future
reads. The graph itself goes to `_txn_cycles`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from seedbed.check._txn_history import Txn, TxnHistory, check_unique_writes, format_value

WW: Final = 1
WR: Final = 2
RW: Final = 4
REALTIME: Final = 8
PROCESS: Final = 16
KIND_NAMES: Final = {WW: "ww", WR: "wr", RW: "rw", REALTIME: "realtime", PROCESS: "process"}
KIND_BITS: Final = 5  # a packed edge is (successor << KIND_BITS) | kind
KIND_MASK: Final = (1 << KIND_BITS) - 1
INIT: Final[Any] = object()  # the initial state of a key, before any write


@dataclass(frozen=True)
class Anomaly:
    """One anomaly: its class, the transactions involved and why, in words.

    For a cycle, ``txns`` is the cycle in order (the first repeated at the
    end is implied) and ``steps`` explains each edge. ``proved_only`` marks a
    cycle known to exist (from its component) but not extracted in time.
    """

    name: str
    txns: tuple[int, ...]
    text: str
    steps: tuple[str, ...] = ()
    proved_only: bool = False

    def to_json(self) -> dict[str, Any]:
        """The anomaly as a JSON object."""
        out: dict[str, Any] = {"name": self.name, "txns": list(self.txns), "text": self.text}
        if self.steps:
            out["steps"] = list(self.steps)
        if self.proved_only:
            out["proved_only"] = True
        return out


@dataclass
class Inference:
    """The dependency graph of one history and the anomalies found directly.

    ``out[t]`` holds transaction ``t``'s edges packed as ints, ``(successor
    << KIND_BITS) | kind``, one per edge added (a successor can repeat,
    once per kind); ``succ[t]`` maps each successor to the bit mask of its
    edge kinds, built when first asked for. ``nodes`` are the transactions
    in the graph (committed or unknown), in id order.

    A million transactions have some seven million edges: as a dict per
    transaction they took 330 MB, packed in an array per transaction 110 MB.
    Only the transactions on cycles, usually none, ever need their dict.
    """

    history: TxnHistory
    nodes: list[int]
    out: list[array[int]]
    direct: list[Anomaly] = field(default_factory=list)
    # Indexes kept to explain an edge on demand (cheaper than storing a reason per edge).
    writer: dict[tuple[Hashable, Hashable], int] = field(default_factory=dict)
    prev: dict[tuple[Hashable, Hashable], tuple[Any, ...]] = field(default_factory=dict)
    # List-append: each key's version order, from which `before` finds a
    # version's predecessor when asked (rw-register fills `prev` instead).
    orders: dict[Hashable, tuple[Any, ...]] | None = None
    succ: _Kinds = field(init=False)

    def __post_init__(self) -> None:
        self.succ = _Kinds(self.out)

    def targets(self, v: int) -> list[int]:
        """The successors of ``v`` (with repeats), whatever the kind."""
        return [packed >> KIND_BITS for packed in self.out[v]]

    def before(self, key: Hashable, value: Any) -> tuple[Any, ...]:
        """The versions of ``key`` known to come right before ``value``'s."""
        if self.orders is None:
            return self.prev.get((key, value), ())
        order = self.orders.get(key, ())
        if value not in order:
            return (order[-1] if order else INIT,)  # unread: after the longest read
        at = order.index(value)
        return (order[at - 1] if at > 0 else INIT,)

    def add(self, a: int, b: int, kind: int) -> None:
        """Add edge ``a -> b`` of ``kind`` (self-edges carry no information)."""
        if a != b:
            self.out[a].append(b << KIND_BITS | kind)

    def explain(self, a: int, b: int, kind: int) -> str:
        """Why edge ``a -> b`` of ``kind`` holds, in words a reader can check."""
        txns = self.history.txns
        ta, tb = txns[a], txns[b]
        if kind == REALTIME:
            return (
                f"T{a} -realtime-> T{b}: T{a} completed (line {ta.lines[1]}) "
                f"before T{b} was invoked (line {tb.lines[0]})"
            )
        if kind == PROCESS:
            return f"T{a} -process-> T{b}: both by process {ta.process}, T{a} first and committed"
        reason = next(self._reasons(ta, tb, kind), "")
        return f"T{a} -{KIND_NAMES[kind]}-> T{b}: {reason}"

    def _reasons(self, ta: Txn, tb: Txn, kind: int) -> Iterator[str]:
        if kind == WR:
            for f, key, value in tb.mops:
                seen = _last_seen(value, self.history.model) if f == "r" else INIT
                if seen is not INIT and self.writer.get((key, seen)) == ta.id:
                    yield (
                        f"T{tb.id} read key {format_value(key)} = {format_value(value)}, "
                        f"whose last write, {format_value(seen)}, is T{ta.id}'s"
                    )
            return
        for f, key, value in tb.mops:
            if f == "r":
                continue
            for p in self.before(key, value):
                if kind == WW and p is not INIT and self.writer.get((key, p)) == ta.id:
                    yield (
                        f"on key {format_value(key)}, T{tb.id} wrote {format_value(value)} "
                        f"right after T{ta.id}'s {format_value(p)}"
                    )
                read = _read_of(ta, key, p, self.history.model) if kind == RW else None
                if read is not None:
                    yield self._rw_reason(ta.id, tb.id, key, read, value, p)

    def _rw_reason(self, a: int, b: int, key: Hashable, read: Any, value: Any, p: Any) -> str:
        if self.history.model == "rw-register":
            return (
                f"T{a} read key {format_value(key)} = {format_value(read)}, "
                f"a version T{b}'s write of {format_value(value)} came after"
            )
        after = "became its first element" if p is INIT else f"came right after {format_value(p)}"
        return (
            f"T{a} read key {format_value(key)} = {format_value(read)}, without "
            f"T{b}'s append of {format_value(value)}, which {after}"
        )


class _Kinds:
    """``kinds[v]``: each successor of ``v`` mapped to its edge kinds, merged
    from the packed edges on first use and kept (the cycle searches ask for
    the same transactions again and again)."""

    def __init__(self, out: list[array[int]]) -> None:
        self._out = out
        self._made: dict[int, dict[int, int]] = {}

    def __getitem__(self, v: int) -> dict[int, int]:
        made = self._made.get(v)
        if made is None:
            made = self._made[v] = {}
            for packed in self._out[v]:
                w = packed >> KIND_BITS
                made[w] = made.get(w, 0) | (packed & KIND_MASK)
        return made


def _last_seen(value: Any, model: str) -> Any:
    """The write a read observed: a list's last element, a register's value."""
    if model == "list-append":
        return value[-1] if value else INIT
    return INIT if value is None else value


def _read_of(txn: Txn, key: Hashable, state: Any, model: str) -> Any:
    """What committed ``txn`` read of ``key`` if it saw the version ending in ``state``."""
    if txn.status != "ok":
        return None
    for f, k, v in txn.mops:
        if f == "r" and k == key:
            seen = _last_seen(v, model)
            if seen is state or (seen is not INIT and state is not INIT and seen == state):
                return () if v is None and model == "list-append" else v
    return None


def infer(
    history: TxnHistory,
    read_rules: Callable[[Inference], None],
    *,
    realtime: bool = True,
    process: bool = True,
) -> Inference:
    """Build the dependency graph of ``history`` and find the direct anomalies.

    ``read_rules`` is the model's own inference (``infer_list_append`` or
    ``infer_rw_register``): passed in by the caller, which imports both, so
    the model modules can import this one without a cycle.
    """
    check_unique_writes(history)
    n = len(history.txns)
    nodes = [t.id for t in history.txns if t.status != "fail"]
    inference = Inference(history, nodes, [array("q") for _ in range(n)])
    for txn in history.txns:
        for f, key, value in txn.mops:
            if f != "r":
                inference.writer[(key, value)] = txn.id
    read_rules(inference)
    if realtime:
        add_realtime_edges(inference)
    if process:
        add_process_edges(inference)
    return inference


def add_realtime_edges(inference: Inference) -> None:
    """T1 -> T2 when T1 completed before T2 began, as a transitive reduction.

    Sweep the events in order keeping the *frontier*: completed transactions
    no later completion has yet covered. A transaction's predecessors are the
    frontier at its invocation; when it completes, it replaces them there.
    """
    txns = inference.history.txns
    # Event indices are distinct, so the moments sort themselves into a list
    # indexed by event: entry 2t+1 is t's invocation, 2t+2 its completion.
    moments = [0] * (1 + max((txns[t].ret or txns[t].call for t in inference.nodes), default=0))
    for t in inference.nodes:
        moments[txns[t].call] = 2 * t + 1
        ret = txns[t].ret
        if ret is not None and txns[t].status == "ok":
            moments[ret] = 2 * t + 2
    frontier: dict[int, None] = {}
    preds: dict[int, tuple[int, ...]] = {}
    out = inference.out
    for moment in moments:
        if not moment:
            continue
        t = (moment - 1) >> 1
        if moment & 1:
            preds[t] = tuple(frontier)
            packed = t << KIND_BITS | REALTIME
            for p in preds[t]:
                out[p].append(packed)
        else:
            for p in preds.pop(t, ()):
                frontier.pop(p, None)
            frontier[t] = None


def add_process_edges(inference: Inference) -> None:
    """Each client's committed transaction precedes its next one."""
    last: dict[Hashable, int] = {}
    for t in inference.nodes:
        txn = inference.history.txns[t]
        if txn.process is None:
            continue
        before = last.get(txn.process)
        if before is not None:
            inference.add(before, t, PROCESS)
        if txn.status == "ok":
            last[txn.process] = t
