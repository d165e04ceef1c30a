"""One client connection's command state: fakeredis's socket, with its replies held back.

fakeredis's `AsyncFakeSocket` parses the requests fed to it, runs each
command against the shared server and queues the reply; blocking commands
(BLPOP...) park in a task on the running loop and queue their reply later.
This subclass changes four things, each through one method:

- `put_response`: a reply is kept with the number of the journal record
  that holds the writes it depends on, so the connection sends it only once
  that record is as durable as `appendfsync` promises (`Journal`), and with
  the protocol and kind (push or reply) it is written in.
- `_process_command`: each command is one journal record (a transaction
  or a script included), sealed when the command ends.
- `_name_to_func`: with the append-only file on, the command families the
  file cannot hold (streams, the module types) are refused with an error
  reply, rather than served and then lost at the next restart.
- `_decode_error`: errors stay fakeredis's `SimpleError`, whose text is the
  exact Redis error, instead of becoming redis-py exception objects.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from fakeredis._commands import Signature
from fakeredis._helpers import SimpleError
from fakeredis._socket import AsyncFakeSocket
from fakeredis.model._command_info import is_write_command

from seedbed.services._journal import Journal
from seedbed.services._keyspace import SimServer
from seedbed.services._resp import Raw

# Commands the stand-in answers itself: replication (fakeredis has none).
ROLE_COMMANDS = frozenset({b"sync", b"replicaof", b"slaveof", b"role"})


class Role(Protocol):
    """The node's replication role (`_replication.Replication`), as a session sees it."""

    primary: tuple[str, int] | None  # whom this node replicates, if it is a replica
    replicated: bool  # a replica follows this node, or it follows a primary

    def command(self, session: Session, name: bytes, args: list[bytes]) -> Any: ...


# Command families whose values the append-only file does not write (their
# mixin's class name): served only when `appendonly=False`.
UNPERSISTED = frozenset({
    "ArrayCommandsMixin", "StreamsCommandsMixin", "JSONCommandsMixin", "BFCommandsMixin",
    "CFCommandsMixin", "CMSCommandsMixin", "TopkCommandsMixin", "TDigestCommandsMixin",
    "TimeSeriesCommandsMixin", "DragonflyCommandsMixin", "VectorSetCommandsMixin",
})  # fmt: skip
_PUBSUB_KINDS = frozenset({
    b"message", b"pmessage", b"smessage", b"subscribe", b"unsubscribe",
    b"psubscribe", b"punsubscribe", b"ssubscribe", b"sunsubscribe",
})  # fmt: skip
# The commands whose own replies are pushes in RESP3 (confirmations, a message to oneself).
_PUBSUB_COMMANDS = frozenset({b"subscribe", b"unsubscribe", b"psubscribe", b"punsubscribe",
                              b"ssubscribe", b"sunsubscribe", b"publish", b"spublish"})  # fmt: skip


class Reply(NamedTuple):
    """A reply waiting to be sent: what, after which journal record, how encoded."""

    value: Any
    record: int
    protocol: int
    push: bool


class Session(AsyncFakeSocket):
    """A connection's state on the server; `replies` holds what is to be sent, in order."""

    def __init__(
        self,
        server: SimServer,
        journal: Journal,
        *,
        persisted: bool,
        link: bool = False,
        role: Role | None = None,
    ) -> None:
        super().__init__(server, 0, client_class=_NoClient, client_info={})
        self.journal = journal
        self.persisted = persisted
        self.link = link  # the file's loader or a replica's link: writes even on a replica
        self.role = role
        self.replies: collections.deque[Reply] = collections.deque()
        self.wake = asyncio.Event()
        self.on_close: list[Callable[[], None]] = []
        self._blocked_task: asyncio.Task[Any] | None = None
        self._command = b""  # the command running now, lower case
        self._batch = False  # inside `apply`: one record for many commands
        self.closing = False  # the server hangs up once what is queued is sent

    def apply(self, payload: bytes) -> None:
        """Run a record's commands (from the file, or from a primary) as one record."""
        journal = self.journal
        journal.running, self._batch = self, True
        try:
            self.sendall(payload)
        finally:
            journal.running, self._batch = None, False
            journal.seal()
            self.replies.clear()

    def send_raw(self, data: bytes) -> None:
        """Queue bytes to send as they are (the replication stream), after the replies."""
        self.replies.append(Reply(Raw(data), 0, 2, False))
        self.wake.set()

    def close(self) -> None:
        """The client is gone. A command it left blocked (BLPOP) is cancelled first and
        the session closed once that has unwound, so it never takes an item for
        nobody (as Redis unblocks a client that disconnects)."""
        for callback in self.on_close:
            callback()
        self.on_close.clear()
        task = self._blocked_task
        if task is not None and not task.done():
            task.cancel()
            task.add_done_callback(lambda _: AsyncFakeSocket.close(self))
        elif self.responses is not None:
            super().close()

    async def _async_blocking(self, *args: Any, **kwargs: Any) -> None:
        if self.responses is None:  # closed before this blocked command began waiting
            return
        self._blocked_task = asyncio.current_task()
        try:
            await super()._async_blocking(*args, **kwargs)
        finally:
            self._blocked_task = None

    def protocol_error(self, error: SimpleError) -> None:
        """The client sent something that is not RESP: answer with the error, then hang up."""
        self.put_response(error)
        self.closing = True

    def put_response(self, msg: Any) -> None:
        if self.responses is None:  # closed: nobody will read it
            return
        journal = self.journal
        if journal.running is None:
            journal.seal()  # a blocked command served later: its writes are one record
        # Another connection's command put it here (a PUBLISH, a keyspace event):
        # a push. A blocked command answered later (no command running) is a reply.
        running = journal.running
        push = (running is not None and running is not self) or (
            running is self and self._command in _PUBSUB_COMMANDS and _is_pubsub(msg)
        )
        record = journal.pending if journal.running is not None else journal.pending - 1
        self.replies.append(Reply(msg, record, self._client_info.protocol_version, push))
        self.wake.set()

    def _process_command(self, fields: list[bytes]) -> None:
        journal = self.journal
        journal.running = self
        self._command = fields[0].lower() if fields else b""
        try:
            if self.role is not None and self._command in ROLE_COMMANDS:
                reply = self.role.command(self, self._command, fields[1:])
                if reply is not None:
                    self.put_response(reply)
            else:
                super()._process_command(fields)
        finally:
            if not self._batch:
                journal.running = None
                journal.seal()

    def _name_to_func(self, cmd_name: str) -> tuple[Callable[..., Any] | None, Signature]:
        func, sig = super()._name_to_func(cmd_name)
        role = self.role
        kept = self.persisted or (role is not None and role.replicated)
        if kept and _family(func) in UNPERSISTED:
            raise SimpleError(
                f"ERR seedbed's Redis stand-in keeps no {cmd_name.upper()} data in its "
                "append-only file or replication stream; serve it with "
                "Redis(appendonly=False) and no replica"
            )
        if not self.persisted and cmd_name in ("save", "bgsave"):
            raise SimpleError(  # Redis would write an RDB file a restart loads: not modelled
                f"ERR seedbed's Redis stand-in writes no RDB snapshot ({cmd_name.upper()}): "
                "use Redis(appendonly=True) for what a restart keeps"
            )
        replica = role is not None and role.primary is not None
        if replica and not self.link and is_write_command(cmd_name.encode()):
            raise SimpleError("READONLY You can't write against a read only replica.")
        return func, sig

    def _decode_error(self, error: SimpleError) -> SimpleError:  # type: ignore[override]
        return error


def _family(func: Callable[..., Any] | None) -> str:
    qualname: str = getattr(getattr(func, "__func__", func), "__qualname__", "")
    return qualname.split(".")[0]


def _is_pubsub(msg: Any) -> bool:
    return isinstance(msg, list) and len(msg) >= 3 and msg[0] in _PUBSUB_KINDS


class _NoClient:
    """fakeredis asks the client class only to parse errors, which `Session` keeps as they are."""
