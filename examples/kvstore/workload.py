"""What clients do in a simulated run, and what their histories must satisfy.

Two kinds of client share one `Workload`:

- `single_key`: get, put and append on a few keys, recorded for the `kv`
  model; the history must be linearizable (`seedbed.check.linearizable`);
- `transactions`: read one or two keys and append to one or two others, in
  one optimistic transaction, on a separate small key space (contention),
  which grows as the run goes: a new key every `FRESH_EVERY` virtual
  seconds, so reads of keys never written (version 0) happen all run long,
  not only in its first instants.

Transactions are checked twice: by inference, Elle's way, for strict
serializability (`seedbed.check.check_transactions`, which needs no help
from the store), and against the order the store claims (`check_serial_order`:
each committed transaction's reads must be exactly what the log order before
it produced).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from examples.kvstore.client import Client, StaleRequest, Unavailable
from seedbed import always
from seedbed.check import Recorder, check_transactions, kv, linearizable

# A session's requests are sequential: an older one applied after a newer one
# can only be a copy the client no longer waits for. A stale answer to the
# request a client waits for means another session took its id.
OWN_SESSION = "kvstore: a client is never told its request is stale (a session's id is its own)"

KEYS = ("k0", "k1", "k2")
TXN_KEYS = ("t0", "t1", "t2", "t3")
FRESH_EVERY = 0.25  # virtual seconds between new transactional keys


@dataclass
class Committed:
    """A transaction that answered committed, at its place in the log."""

    index: int
    ops: list[list[Any]]


@dataclass
class Workload:
    """Shared by a run's clients: histories, outcomes, and when to stop."""

    servers: dict[str, tuple[str, int]]
    until: float  # virtual time after which clients stop starting operations...
    think_max: float = 0.05
    min_ok: int = 0  # ...once this many operations succeeded, however long it takes
    history: Recorder = field(default_factory=Recorder)
    txn_history: Recorder = field(default_factory=Recorder)
    committed: list[Committed] = field(default_factory=list)
    aborted: list[list[list[Any]]] = field(default_factory=list)
    unknown: list[list[list[Any]]] = field(default_factory=list)
    in_flight: dict[str, list[list[Any]]] = field(default_factory=dict)
    on_ok: Callable[[dict[str, Any], Any], None] | None = None  # every ok answer (an oracle)
    deadline: float = 5.0  # seconds a client tries one operation before its outcome is unknown
    attempt_timeout: float = 1.0  # seconds a client waits for one replica's answer
    ok_count: int = 0
    ok_gets: int = 0  # without one, the single-key history cannot show linearizability
    starts: int = 0  # clients started (a crashed client restarts as a new process)

    def runner(self, kind: str, name: str) -> Callable[[], Awaitable[int]]:
        """A client's main: `single_key` or `transactions` as client `name`.

        A crashed client restarts under the same name, as a real one started
        from the same configuration does: the store must not take the new
        process's requests for its predecessor's.
        """
        method = self.single_key if kind == "single_key" else self.transactions

        async def main() -> int:
            self.starts += 1
            try:
                return await method(name)
            except StaleRequest as exc:
                always(False, OWN_SESSION, client=name, error=str(exc))
                raise

        return main

    def client(self, name: str) -> Client:
        return Client(
            self.servers,
            name=name,
            history=self.history,
            transactions=self.txn_history,
            on_ok=self.on_ok,
            attempt_timeout=self.attempt_timeout,
            deadline=self.deadline,
        )

    async def single_key(self, name: str) -> int:
        """Random single-key operations until `until`; returns how many succeeded."""
        client, done = self.client(name), 0
        while self.going():
            key, value = random.choice(KEYS), f"{client.name}.{done}.{random.getrandbits(16)}"
            op = random.choice(("get", "get", "put", "append", "append"))
            try:
                if op == "get":
                    await client.get(key)
                else:
                    await getattr(client, op)(key, value)
                done += 1
                self.ok_count += 1
                self.ok_gets += op == "get"
            except Unavailable:
                client.new_session()
            await asyncio.sleep(random.uniform(0.0, self.think_max))
        client.close()
        return done

    async def transactions(self, name: str) -> int:
        """Random read-then-append transactions until `until`; returns how many committed."""
        client, done = self.client(name), 0
        attempt = 0  # values are unique by construction: the checker needs each once
        while self.going():
            attempt += 1
            keys = _txn_keys(asyncio.get_running_loop().time())
            reads = random.sample(keys, random.randint(1, 2))
            writes = random.sample(keys, random.randint(1, 2))
            txn = client.begin()
            try:
                for key in reads:
                    await txn.get(key)
                for number, key in enumerate(writes):
                    txn.append(key, f"{client.name}.{attempt}.{number}")
                ops = self.in_flight[client.name] = _planned(txn)
                if await txn.commit():
                    assert txn.index is not None
                    self.committed.append(Committed(txn.index, _observed(txn)))
                    done += 1
                    self.ok_count += 1
                else:
                    self.aborted.append(ops)
            except Unavailable:
                if txn.committing:
                    self.unknown.append(_planned(txn))
                client.new_session()
            self.in_flight.pop(client.name, None)
            await asyncio.sleep(random.uniform(0.0, self.think_max))
        client.close()
        return done

    def going(self) -> bool:
        """Should clients start another operation?

        Until `until`, and after it until `min_ok` operations succeeded in all
        and each history can show its property (`shows`): faults may block
        every operation of the planned time (a partition that leaves no
        quorum), and whether the store makes progress once they stop is the
        liveness question worth asking.
        """
        now = asyncio.get_running_loop().time()
        return now < self.until or self.ok_count < self.min_ok or not self.shows()

    def shows(self) -> bool:
        """Whether both histories can be refused if wrong: a get succeeded, and a
        transaction (each reads) committed. Without, their checks are vacuous."""
        return self.ok_gets > 0 and len(self.committed) > 0

    def problems(self) -> list[str]:
        """What is wrong with the histories (a crashed client's mid-commit txn is unknown)."""
        problems = []
        verdict = linearizable(self.history.history, kv(), timeout=30)
        if not verdict:
            problems.append(f"single-key history not linearizable: {verdict.explain()}")
        txns = check_transactions(self.txn_history.history, "list-append", timeout=30)
        if not txns:
            problems.append(f"transactions not strictly serializable: {txns.explain()}")
        unknown = self.unknown + list(self.in_flight.values())
        problems += check_serial_order(self.committed, self.aborted, unknown)[:3]
        return problems


def _txn_keys(now: float) -> list[str]:
    """The fixed keys and the two newest fresh ones (likely unwritten yet)."""
    tick = int(now / FRESH_EVERY)
    return [*TXN_KEYS, f"f{tick}", f"f{tick + 1}"]


def _planned(txn: Any) -> list[list[Any]]:
    return [["r", key, None] for key, _, _ in txn.reads] + [list(w) for w in txn.writes]


def _observed(txn: Any) -> list[list[Any]]:
    return [["r", key, value] for key, _, value in txn.reads] + [list(w) for w in txn.writes]


def check_serial_order(
    committed: list[Committed], aborted: list[list[list[Any]]], unknown: list[list[list[Any]]]
) -> list[str]:
    """Problems with the claim that the log order is a serial order of the transactions.

    Every value is appended once, so a read list names its writers. Replaying
    committed transactions in log order, each read must show exactly the
    appends committed before it, in order, plus possibly appends whose
    outcome is unknown; never an aborted one's.
    """
    aborted_values = {op[2] for ops in aborted for op in ops if op[0] == "append"}
    unknown_values = {op[2] for ops in unknown for op in ops if op[0] == "append"}
    state: dict[str, list[str]] = {}
    problems: list[str] = []
    for txn in sorted(committed, key=lambda txn: txn.index):
        for op in txn.ops:
            if op[0] != "r":
                continue
            key, seen = op[1], op[2]
            known = [value for value in seen if value not in unknown_values]
            if any(value in aborted_values for value in seen):
                problems.append(f"txn at {txn.index} read an aborted write in {key}: {seen}")
            elif known != state.get(key, []):
                problems.append(
                    f"txn at {txn.index} read {key}={known}, expected {state.get(key, [])}"
                )
        for op in txn.ops:
            if op[0] == "append":
                state.setdefault(op[1], []).append(op[2])
    return problems
