"""The replicated state machine: lists of strings by key, and optimistic transactions.

Every key holds a list. `put` replaces it with one element, `append` adds an
element (list-append: histories of appends and reads can be checked for
serializability by inference), `get` reads it together with its version, the
log index of the last write to the key (0 if never written).

A transaction reads at versions, buffers its writes, and commits by sending
`{reads: [[key, version]...], writes: [[op, key, value]...]}` through the log.
Applying it validates every read: if a key's version changed, the transaction
aborts and nothing is written. Every replica applies the same log in the same
order, so they all reach the same verdict, and the order of the log is a
serial order of the committed transactions (strict serializability).

Requests carry a client id and a sequence number; a retried request that
already committed returns its first result instead of applying twice.
"""

from __future__ import annotations

from typing import Any

from examples.kvstore import bugs

Command = dict[str, Any]
Result = dict[str, Any]


class Machine:
    """Applies committed commands in log order; the same on every replica."""

    def __init__(self) -> None:
        self.data: dict[str, list[str]] = {}
        self.versions: dict[str, int] = {}
        self.sessions: dict[str, list[Any]] = {}  # client -> [last seq, its result]

    def snapshot(self) -> dict[str, Any]:
        """The whole state, JSON-able."""
        return {"data": self.data, "versions": self.versions, "sessions": self.sessions}

    @classmethod
    def restore(cls, state: dict[str, Any]) -> Machine:
        machine = cls()
        machine.data = {key: list(value) for key, value in state["data"].items()}
        machine.versions = dict(state["versions"])
        machine.sessions = {key: list(value) for key, value in state["sessions"].items()}
        return machine

    def read(self, key: str) -> Result:
        """A key's value and version, as a `get` returns them."""
        return {"value": list(self.data.get(key, [])), "version": self.versions.get(key, 0)}

    def apply(self, index: int, command: Command) -> Result:
        """Apply the command committed at log `index`; deduplicates retried requests."""
        client, seq = command.get("client"), command.get("seq")
        if isinstance(client, str) and isinstance(seq, int):
            last = self.sessions.get(client)
            if last is not None and last[0] >= seq:
                result: Result = last[1] if last[0] == seq else {"error": "stale request"}
                return result
        result = self._execute(index, command)
        result["index"] = index
        if isinstance(client, str) and isinstance(seq, int):
            self.sessions[client] = [seq, result]
        return result

    def _execute(self, index: int, command: Command) -> Result:
        op = command.get("op")
        if op == "get":
            return self.read(str(command["key"]))
        if op in ("put", "append"):
            self._write(index, op, str(command["key"]), str(command["value"]))
            return {}
        if op == "txn":
            return self._transaction(index, command)
        return {}  # "noop": a new leader's first entry

    def _write(self, index: int, op: str, key: str, value: str) -> None:
        if op == "put":
            self.data[key] = [value]
        else:
            self.data.setdefault(key, []).append(value)
        self.versions[key] = index

    def _transaction(self, index: int, command: Command) -> Result:
        writes = [(str(op), str(key), str(value)) for op, key, value in command["writes"]]
        written = [key for _, key, _ in writes]
        for key, version in command["reads"]:
            if bugs.planted("skip_read_validation") and key not in written:
                continue
            if self.versions.get(key, 0) != version:
                return {"committed": False, "conflict": key}
        for op, key, value in writes:
            self._write(index, op, key, value)
        return {"committed": True}
