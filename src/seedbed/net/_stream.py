"""Stream transports: one end of a simulated TCP connection.

Fault model (the pipes carry the timing; see `_pipe`): a connection is
reliable and ordered while it lives. It ends by FIN (`close`, `write_eof`:
the peer's protocol gets `eof_received`), by RST (`abort`, data arriving at
a closed end, a crash of the peer's node, or a partition outlasting
`partition_reset_timeout`: the peer gets `connection_lost` with
`ConnectionResetError`). A crashed node's ends vanish without calling its
protocols again.

Every protocol callback runs in the context the end was created in (a copy
of the connecting or listening code's context), so `current_node()` inside a
protocol names the node that owns it. A `BufferedProtocol` (asyncio's TLS
protocol is one) is fed as stock transports feed it: `get_buffer`, the bytes
copied in, `buffer_updated`, as often as a chunk needs (`BufferedFeed`).
Flow control is a real window: once
more than the high-water mark (default `stream_window`) is written but not
yet delivered to the peer's protocol, `pause_writing` is called, and
`resume_writing` when it drains to the low-water mark. A peer that stops
reading (`pause_reading`) stops deliveries, so the writer's window fills.

Contracts: a window's backlog is never negative and its marks are ordered
(high >= low >= 0) where the writer pauses and where the reader's deliveries
resume it; a crashed end leaves a reset for its peer and nothing queued for
itself, and a lost end is forgotten by its node. A lost end stops reading,
and the pipe checks that it hands such an end nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import socket
from collections.abc import Callable, Iterable
from typing import Any

from seedbed._core.contract import require
from seedbed._core.identity import NodeRef
from seedbed.net._fabric import Fabric
from seedbed.net._pipe import DATA, RST, Pipe

Address = tuple[str, int]


class SimSocket:
    """What `get_extra_info("socket")` and `Server.sockets` return: no real socket.

    Socket options are accepted and ignored; the addresses are simulated.
    """

    family = socket.AF_INET

    def __init__(self, kind: int, sockname: Address, peername: Address | None = None) -> None:
        self.type = kind
        self.proto = 0
        self._sockname = sockname
        self._peername = peername

    def getsockname(self) -> Address:
        return self._sockname

    def getpeername(self) -> Address:
        if self._peername is None:
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")
        return self._peername

    def fileno(self) -> int:
        return -1

    def setsockopt(self, *args: Any) -> None:
        """Ignored: the simulated network has no socket options."""

    def getsockopt(self, *args: Any) -> int:
        return 0

    def setblocking(self, flag: bool) -> None:
        """Ignored: simulated sockets never block."""

    def __repr__(self) -> str:
        return f"<seedbed SimSocket {self._sockname} -> {self._peername}>"


class BufferedFeed:
    """What a delivery calls `data_received` on for a `BufferedProtocol`.

    Stock transports read into the protocol's own buffer (`get_buffer(n)`,
    then `buffer_updated(nbytes)`) and never call `data_received`, which a
    `BufferedProtocol` need not have. A chunk larger than the buffer offered
    fills several buffers in turn, within one delivery (a chunk is atomic, as
    it is for `data_received`); a protocol that fails, or closes its
    transport, gets no more of it.
    """

    __slots__ = ("end", "protocol")

    def __init__(self, end: StreamEndpoint, protocol: asyncio.BufferedProtocol) -> None:
        self.end = end
        self.protocol = protocol

    def data_received(self, data: bytes) -> None:
        view, protocol, end = memoryview(data), self.protocol, self.end
        while view and not end.lost:
            try:
                buffer = memoryview(protocol.get_buffer(len(view))).cast("B")
                if not buffer.nbytes:
                    raise RuntimeError("get_buffer() returned an empty buffer")
            except Exception as exc:
                end._protocol_failed(exc, "get_buffer")
                return
            size = min(buffer.nbytes, len(view))
            buffer[:size] = view[:size]
            view = view[size:]
            try:
                protocol.buffer_updated(size)
            except Exception as exc:
                end._protocol_failed(exc, "buffer_updated")
                return


def reader_of(end: StreamEndpoint, protocol: asyncio.BaseProtocol | None) -> Any:
    """What deliveries call `data_received` on: the protocol, or its buffered feed."""
    if isinstance(protocol, asyncio.BufferedProtocol):
        return BufferedFeed(end, protocol)
    return protocol


class StreamEndpoint(asyncio.Transport):
    """One end of a connection; an `asyncio.Transport` for the node that owns it."""

    def __init__(
        self,
        fabric: Fabric,
        ref: NodeRef,
        context: contextvars.Context,
        outgoing: Pipe,
        incoming: Pipe,
        sockname: Address,
        peername: Address,
    ) -> None:
        sock = SimSocket(socket.SOCK_STREAM, sockname, peername)
        super().__init__({"sockname": sockname, "peername": peername, "socket": sock})
        self.sockname = sockname
        self.peername = peername
        self.fabric = fabric
        self.ref = ref
        self.node = ref.name
        self.context = context
        self.outgoing = outgoing
        self.incoming = incoming
        outgoing.sender = incoming.receiver = self
        self.protocol: asyncio.BaseProtocol | None = None
        self.reader: Any = None  # the protocol, or its BufferedFeed (see `reader_of`)
        self.number = fabric.next_number()
        self.reading = False  # deliveries wait until a protocol is attached
        self.read_paused = False
        self.write_paused = False
        self.closing = False
        self.eof_sent = False
        self.lost = False
        self.high_water = fabric.window
        self.low_water = fabric.window // 4
        self.on_lost: Callable[[StreamEndpoint], None] | None = None
        self.port_release: Callable[[], None] | None = None
        fabric.register(self.node, self.number, self)

    def __repr__(self) -> str:
        state = "lost" if self.lost else "closing" if self.closing else "open"
        return f"<StreamEndpoint {self.node} {self.sockname} -> {self.peername} {state}>"

    def attach(self, protocol: asyncio.BaseProtocol) -> None:
        """Give the end its protocol and start delivering (call in its context)."""
        self.protocol = protocol
        self.reader = reader_of(self, protocol)
        protocol.connection_made(self)
        if not self.closing:
            self.reading = not self.read_paused
            if self.reading:
                self.incoming.reader_ready()

    # -- asyncio.Transport: writing -----------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.ref.observer is not None:  # a fault waits for a send (`world._operations`)
            self._observed_write(data)
            return
        pipe = self.outgoing
        if pipe.hot_at == pipe.clock.now and type(data) is bytes:
            # The hot path: more bytes at the instant of the open tail segment
            # (a closing end has queued a FIN or RST, so it never gets here).
            pipe.data += data
            pipe.sent = sent = pipe.sent + len(data)
            pipe.tail[1] = sent
        elif type(data) is not bytes or not data or self.closing or self.eof_sent:
            self._write(data)  # the general path: checks, conversions, refusals
            return
        else:  # the first write at this instant: a new segment
            pipe.data += data
            pipe.sent = sent = pipe.sent + len(data)
            pipe.push(DATA, pipe.clock.now)
        if sent - pipe.delivered > self.high_water and not self.write_paused:
            self._pause()

    def _pause(self) -> None:
        """The backlog passed the high-water mark: tell the protocol to stop writing."""
        self._check_window("a writer pauses on an ordered window")
        self.write_paused = True
        self._call_protocol("pause_writing")

    def _check_window(self, rule: str) -> None:
        backlog = self.outgoing.backlog
        require(
            backlog >= 0 and self.high_water >= self.low_water >= 0,
            rule,
            backlog=backlog, high=self.high_water, low=self.low_water,
        )  # fmt: skip

    def _observed_write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.ref.observer("send", "before"):
            self._write(data)
            if self.ref.observer is not None:
                self.ref.observer("send", "after")

    def _write(self, data: bytes | bytearray | memoryview) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(
                f"data argument must be a bytes-like object, not {type(data).__name__!r}"
            )
        if self.eof_sent and not self.closing:
            raise RuntimeError("Cannot call write() after write_eof()")
        if not data or self.closing:
            return  # like asyncio: writes after close are dropped
        pipe = self.outgoing
        pipe.send(bytes(data))
        if not self.write_paused and pipe.backlog > self.high_water:
            self._pause()

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        self.write(b"".join(list_of_data))

    def write_eof(self) -> None:
        if self.eof_sent or self.closing:
            return
        self.eof_sent = True
        self.outgoing.send_fin()

    def can_write_eof(self) -> bool:
        return True

    def get_write_buffer_size(self) -> int:
        if self.lost:
            return 0
        self._check_window("a write buffer's size is never negative")
        return self.outgoing.backlog

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (self.low_water, self.high_water)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if high is None:
            high = self.fabric.window if low is None else 4 * low
        if low is None:
            low = high // 4
        if not high >= low >= 0:
            raise ValueError(f"high ({high!r}) must be >= low ({low!r}) must be >= 0")
        self.high_water, self.low_water = high, low

    def window_opened(self) -> None:
        """Bytes were delivered: resume the writer once the backlog is low (pipe calls)."""
        self._check_window("deliveries leave a writer's backlog non-negative")
        if self.write_paused and self.outgoing.backlog <= self.low_water and not self.lost:
            self.write_paused = False
            self.fabric.loop.call_soon(self._call_protocol, "resume_writing", context=self.context)

    # -- asyncio.Transport: reading and closing ------------------------------

    def pause_reading(self) -> None:
        self.read_paused = True
        self.reading = False

    def resume_reading(self) -> None:
        self.read_paused = False
        if self.protocol is not None and not self.closing:
            self.reading = True
            self.incoming.reader_ready()

    def is_reading(self) -> bool:
        return self.reading

    def is_closing(self) -> bool:
        return self.closing

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol
        self.reader = reader_of(self, protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        assert self.protocol is not None
        return self.protocol

    def close(self) -> None:
        """Send FIN after what is queued; the protocol's `connection_lost(None)` follows."""
        if self.closing:
            return
        self.closing = True
        self.reading = False
        if not self.eof_sent:
            self.eof_sent = True
            self.outgoing.send_fin()
        self.fabric.loop.call_soon(self._lose, None, context=self.context)

    def abort(self) -> None:
        """Drop what is queued and reset the connection."""
        if self.lost:
            return
        self.closing = True
        self.reading = False
        self.outgoing.send_rst()
        self.incoming.clear()
        self.fabric.loop.call_soon(self._lose, None, context=self.context)

    def _force_close(self, exc: BaseException | None) -> None:
        """Reset the connection; the protocol's `connection_lost(exc)` follows.

        Private on stock transports, and called on them by asyncio's own TLS
        protocol (`SSLProtocol._fatal_error`): `abort` that reports `exc`.
        """
        if self.lost:
            return
        self.closing = True
        self.reading = False
        self.outgoing.send_rst()
        self.incoming.clear()
        self.fabric.loop.call_soon(self._lose, exc, context=self.context)

    # -- arrivals (called by the incoming pipe, in this end's context) --------

    def receive(self, data: bytes) -> None:
        observer = self.ref.observer  # a fault waits for a receive (`world._operations`)
        if observer is not None and observer("receive", "before"):
            return
        if self.closing:
            self._refuse_data()
            return
        if self.reader is not None and self.ref.alive:
            try:
                self.reader.data_received(data)
            except Exception as exc:
                self._protocol_failed(exc, "data_received")
        if observer is not None:
            observer("receive", "after")

    def receive_eof(self) -> None:
        if self.closing:
            return
        self.fabric.trace.emit("net.fin", self.number)
        try:
            keep_open = self.protocol.eof_received()  # type: ignore[union-attr]
        except Exception as exc:
            self._protocol_failed(exc, "eof_received")
            return
        if not keep_open:
            self.close()

    def receive_reset(self) -> None:
        if not self.lost:
            self.fabric.trace.emit("net.rst", self.number)
            self.outgoing.clear()
            self._lose(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))

    def reset_by_network(self) -> None:
        """A partition outlasted the reset timeout: both ends are reset."""
        if not self.lost:
            self.closing = True
            self.reading = False
            self.outgoing.clear()
            self.incoming.clear()
            error = ConnectionResetError(
                errno.ECONNRESET, "Connection reset (partitioned too long)"
            )
            self.fabric.loop.call_soon(self._lose, error, context=self.context)

    def crash(self) -> None:
        """The owning node crashed: vanish silently and reset the peer."""
        if self.lost:
            return
        self.lost = self.closing = True
        self.reading = False
        self.incoming.clear()
        self.outgoing.send_rst()
        self._forget()
        outgoing, incoming = self.outgoing, self.incoming
        require(
            outgoing.marks[-1][2] == RST and not incoming.marks and not incoming.data,
            "a crashed end leaves its peer a reset and keeps nothing queued",
            end=self,
        )

    def _refuse_data(self) -> None:
        """Data reached a closed end: answer with a reset, as TCP does."""
        if not self.outgoing.marks or self.outgoing.marks[-1][2] != RST:
            self.outgoing.send_rst()

    def _lose(self, exc: BaseException | None) -> None:
        if self.lost:
            return
        self.lost = self.closing = True
        self.reading = False
        self.incoming.clear()
        self._forget()
        require(
            self.number not in self.fabric.endpoints.get(self.node, {}),
            "a lost end is forgotten by its node",
            end=self,
        )
        if self.protocol is not None and self.ref.alive:
            self._call_protocol("connection_lost", exc)

    def _forget(self) -> None:
        self.fabric.forget(self.node, self.number)
        if self.port_release is not None:
            self.port_release()
            self.port_release = None
        if self.on_lost is not None:
            on_lost, self.on_lost = self.on_lost, None
            on_lost(self)

    def _call_protocol(self, method: str, *args: Any) -> None:
        protocol = self.protocol
        if protocol is None or not self.ref.alive:
            return
        try:
            getattr(protocol, method)(*args)
        except Exception as exc:
            self._protocol_failed(exc, method)

    def _protocol_failed(self, exc: Exception, method: str) -> None:
        self.fabric.loop.call_exception_handler(
            {
                "message": f"Fatal error: protocol.{method}() call failed.",
                "exception": exc,
                "transport": self,
                "protocol": self.protocol,
            }
        )
        if method != "connection_lost":
            self.abort()
