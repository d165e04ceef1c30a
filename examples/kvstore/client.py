"""The client library: timeouts, retries to another replica, idempotent requests, a history.

Every operation gets a request id (`client`, `seq`); a retry, to the same
replica or another, reuses it, so the store applies it at most once. The
`client` part is a session: the name given plus a random suffix drawn when
the `Client` is made, so a process restarted under the same name (its
sequence numbers starting again at 1) is never taken for its predecessor,
whose later requests the store remembers and would answer instead. A reply
saying a request is stale (an older one of its session was applied after
it) is an error, never a success: the request was not applied.

An operation ends in one of three ways, and the history says which:

- ok: the store applied it (and answered);
- fail: it certainly had no effect (a transaction that aborted on a conflict);
- info: the answer never came; it may or may not have been applied.

Single-key operations are recorded for the `kv` model of `seedbed.check`,
with a list written as its elements each followed by a comma (a list
`["a", "b"]` is the string `"a,b,"`; `append(k, "c")` appends `"c,"`).
Transactions are recorded as list-append micro-operations:
`[["r", key, [elements]], ["append", key, value]]`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from typing import Any

from examples.kvstore import bugs, frames
from seedbed.check import Recorder

log = logging.getLogger("kvstore.client")

Address = tuple[str, int]


class Unavailable(Exception):
    """No replica answered in time: the operation's outcome is unknown."""


class StaleRequest(Exception):
    """The store applied a later request of this session first: this one had no effect."""


class Client:
    """Talks to any replica of `servers`, following leader hints."""

    def __init__(
        self,
        servers: dict[str, Address],
        *,
        name: str | None = None,
        history: Recorder | None = None,
        transactions: Recorder | None = None,
        attempt_timeout: float = 1.0,
        deadline: float = 5.0,
        on_ok: Callable[[dict[str, Any], Any], None] | None = None,
    ) -> None:
        self.servers = servers
        self.name = f"{name or 'client'}~{random.getrandbits(32):08x}"  # this session
        self.history = history
        self.txn_history = transactions
        self.attempt_timeout = attempt_timeout
        self.deadline = deadline
        self.on_ok = on_ok  # told each (command, result) a replica answered ok: a test's oracle
        self._seq = 0
        self._target = random.choice(list(servers))
        self._connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def get(self, key: str) -> list[str]:
        """The list at `key` ([] if never written)."""
        self._record_invoke("get", (key, None))
        if bugs.planted("follower_reads"):  # spread reads over every replica
            self._switch(random.choice(list(self.servers)))
        result = await self._recorded(self.history, {"op": "get", "key": key})
        value: list[str] = result["value"]
        if self.history is not None:
            self.history.ok(self.name, (key, _joined(value)))
        return value

    async def put(self, key: str, value: str) -> None:
        """Make `key` hold the one-element list `[value]`."""
        await self._write("put", key, value)

    async def append(self, key: str, value: str) -> None:
        """Append `value` to the list at `key`."""
        await self._write("append", key, value)

    async def _write(self, op: str, key: str, value: str) -> None:
        self._record_invoke(op, (key, value + ","))
        await self._recorded(self.history, {"op": op, "key": key, "value": value})
        if self.history is not None:
            self.history.ok(self.name, (key, value + ","))

    @property
    def replica(self) -> str:
        """The replica this client talks to now (after a success: the leader)."""
        return self._target

    async def status(self, name: str) -> dict[str, Any]:
        """Ask replica `name` for its role, term and log positions."""
        host, port = self.servers[name]
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port), self.attempt_timeout
        )
        try:
            writer.write(frames.encode({"type": "status"}))
            reply = await asyncio.wait_for(frames.read_frame(reader), self.attempt_timeout)
        finally:
            writer.close()
        if reply is None:
            raise ConnectionResetError(f"{name} closed the connection")
        return reply

    def new_session(self) -> None:
        """Continue as a new session after an operation of unknown outcome.

        The lost request may still be applied later; a history checker must
        see later operations as another process, never ordered after it.
        """
        self.close()
        self.name = f"{self.name.split('~')[0]}~{random.getrandbits(32):08x}"
        self._seq = 0

    def begin(self) -> Transaction:
        """Start a transaction (optimistic: it validates its reads at commit)."""
        return Transaction(self)

    def _record_invoke(self, f: str, value: Any) -> None:
        if self.history is not None:
            self.history.invoke(self.name, f, value)

    async def _recorded(self, recorder: Recorder | None, command: dict[str, Any]) -> Any:
        """`request`, recording `info` on the open operation if it raises."""
        try:
            return await self.request(command)
        except BaseException:
            if recorder is not None:
                recorder.info(self.name)
            raise

    async def request(self, command: dict[str, Any]) -> Any:
        """Send one command until a replica applies it; its result. Raises `Unavailable`."""
        self._seq += 1
        command = {**command, "client": self.name, "seq": self._seq}
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.deadline
        while loop.time() < give_up:
            try:
                async with asyncio.timeout(self.attempt_timeout):  # no extra task, unlike wait_for
                    reply = await self._exchange(command)
            except (TimeoutError, OSError, frames.FrameError) as exc:
                log.debug("%s: %s from %s; trying another replica", self.name, exc, self._target)
                self._switch(None)
                await asyncio.sleep(random.uniform(0.01, 0.05))
                continue
            if reply.get("ok"):
                if self.on_ok is not None:
                    self.on_ok(command, reply["result"])
                return reply["result"]
            if reply.get("error") == "stale_request":
                raise StaleRequest(f"{command['op']} {self.name}#{self._seq} was not applied")
            self._switch(reply.get("leader"))
            await asyncio.sleep(random.uniform(0.01, 0.05))
        raise Unavailable(f"{command['op']} got no answer within {self.deadline}s")

    async def _exchange(self, command: dict[str, Any]) -> dict[str, Any]:
        if self._connection is None:
            host, port = self.servers[self._target]
            self._connection = await asyncio.open_connection(host, port)
        reader, writer = self._connection
        writer.write(frames.encode({"type": "request", "command": command}))
        await writer.drain()
        reply = await frames.read_frame(reader)
        if reply is None:
            raise ConnectionResetError("the replica closed the connection")
        return reply

    def _switch(self, leader: Any) -> None:
        """Drop the connection and aim at the hinted leader, or the next replica."""
        self.close()
        if isinstance(leader, str) and leader in self.servers:
            self._target = leader
        else:
            names = list(self.servers)
            self._target = names[(names.index(self._target) + 1) % len(names)]

    def close(self) -> None:
        if self._connection is not None:
            self._connection[1].close()
            self._connection = None


class Transaction:
    """Reads at versions, buffered writes, one commit through the log."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.reads: list[tuple[str, int, list[str]]] = []
        self.writes: list[list[str]] = []
        self.index: int | None = None  # the commit's log index: its place in the serial order
        self.committing = False  # the commit was sent: an unknown outcome may be either

    async def get(self, key: str) -> list[str]:
        """Read `key` (the leader's committed value; validated again at commit)."""
        result = await self.client.request({"op": "get", "key": key})
        value: list[str] = result["value"]
        self.reads.append((key, result["version"], value))
        return value

    def put(self, key: str, value: str) -> None:
        self.writes.append(["put", key, value])

    def append(self, key: str, value: str) -> None:
        self.writes.append(["append", key, value])

    async def commit(self) -> bool:
        """True if committed, False if it aborted on a conflict; `Unavailable` if unknown."""
        recorder, name = self.client.txn_history, self.client.name
        planned = [["r", key, None] for key, _, _ in self.reads] + [
            [op, key, value] for op, key, value in self.writes
        ]
        if recorder is not None:
            recorder.invoke(name, "txn", planned)
        command = {
            "op": "txn",
            "reads": [[key, version] for key, version, _ in self.reads],
            "writes": self.writes,
        }
        self.committing = True
        result = await self.client._recorded(recorder, command)
        if recorder is not None:
            if not result.get("committed"):
                recorder.fail(name, planned)
            else:
                observed = [["r", key, value] for key, _, value in self.reads]
                done = observed + [[op, key, value] for op, key, value in self.writes]
                recorder.ok(name, done)
        self.index = result.get("index")
        return bool(result.get("committed"))


def _joined(elements: list[str]) -> str:
    return "".join(element + "," for element in elements)
