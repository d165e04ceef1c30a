"""Datagram transports: unreliable messages between node ports.

Fault model. Each datagram sent `a -> b` is lost with `loss_probability`
(drawn as `loss a->b`); one that survives is duplicated with
`duplicate_probability`; each copy arrives after its own latency draw, so
datagrams reorder freely. On arrival a partitioned link drops it, a held one
queues it until `release`, and a port with no endpoint (never bound, closed,
or gone with a crashed node) drops it silently. A connected endpoint
(`remote_addr`) only hears from its peer. Nothing is ever delivered to a
crashed node's code.

Contracts: a datagram leaves only from the endpoint bound at its port, and
arrives at most as many times as it was sent (its duplicate counted: each
send carries its count of copies still in flight); a port is owned only by a
live, open endpoint bound there, and a closed or crashed one leaves its port.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
from typing import Any

from seedbed._core.contract import broken, require
from seedbed._core.identity import NodeRef
from seedbed._core.trace import route_word
from seedbed.net._fabric import Fabric
from seedbed.net._links import HELD, OPEN
from seedbed.net._pipe import summary
from seedbed.net._stream import SimSocket

Address = tuple[str, int]


class DatagramEndpoint(asyncio.DatagramTransport):
    """A bound datagram port on one node; an `asyncio.DatagramTransport`."""

    def __init__(
        self,
        fabric: Fabric,
        ref: NodeRef,
        context: contextvars.Context,
        port: int,
        remote: Address | None,
        protocol: asyncio.BaseProtocol,
        *,
        mapped: bool = False,  # a dual-stack IPv6 socket's: peers are `::ffff:a.b.c.d`
        sockname: tuple[Any, ...] | None = None,  # what a bound socket's getsockname said
    ) -> None:
        self.fabric = fabric
        self.mapped = mapped
        self.ref = ref
        self.node = ref.name
        self.context = context
        self.protocol = protocol
        self.remote = remote
        self.port = fabric.datagram_ports.bind(self.node, port, self)
        self.address: Address = (fabric.addresses.address_of(self.node), self.port)
        self.number = fabric.next_number()
        self.closing = False
        name: Any = sockname or self.address
        sock = SimSocket(socket.SOCK_DGRAM, name, remote)
        super().__init__({"sockname": name, "peername": remote, "socket": sock})
        fabric.register(self.node, self.number, self)

    def __repr__(self) -> str:
        return f"<DatagramEndpoint {self.node} {self.address}>"

    # -- asyncio.DatagramTransport ----------------------------------------------

    def sendto(self, data: bytes | bytearray | memoryview, addr: Any = None) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(
                f"data argument must be a bytes-like object, not {type(data).__name__!r}"
            )
        if self.closing:
            return
        if addr is None:
            if self.remote is None:
                raise ValueError("no destination: pass addr, or connect with remote_addr")
            addr = self.remote
        elif self.mapped and isinstance(addr[0], str) and addr[0].startswith("::ffff:"):
            addr = (addr[0][7:], addr[1])  # an IPv4 host, as a dual-stack socket names it
        if self.remote is not None and tuple(addr[:2]) != self.remote:
            raise ValueError(f"Invalid address: must be None or {self.remote}")
        dst = self.fabric.addresses.node_for(addr[0], self.node)
        if dst is None:
            return  # no such host: the datagram goes nowhere, as on a real network
        observer = self.ref.observer  # a fault waits for a send (`world._operations`)
        if observer is not None and observer("send", "before"):
            return
        self._send(bytes(data), dst, int(addr[1]))
        if observer is not None:
            observer("send", "after")

    def _send(self, payload: bytes, dst: str, port: int) -> None:
        fabric = self.fabric
        if fabric.datagram_ports.get(self.node, self.port) is not self:
            broken("a datagram leaves only from the endpoint bound at its port", end=self)
        link = fabric.links.get(self.node, dst)
        stream = fabric.stream
        config = fabric.config
        if stream.chance(config.loss_probability, link.loss_reason):
            link.lost += 1
            fabric.trace.emit("net.lost", self.node, dst, port, len(payload))
            return
        copies = 2 if stream.chance(config.duplicate_probability, link.duplicate_reason) else 1
        if copies == 2:
            link.duplicated += 1
        fabric.trace.emit("net.sent", self.node, dst, port, len(payload), copies)
        # Each copy's final arrival takes one of in_flight[0]; in_flight[1]
        # counts the copies an endpoint received (both: a duplicate seen).
        in_flight = [copies, 0]
        if fabric.trace.notes is not None:
            self._send_noted(fabric.trace.notes, link, payload, dst, port, in_flight)
            return
        for _ in range(copies):
            when = fabric.links.due(link, fabric.clock.now)
            fabric.at(
                when,
                _arrive,
                fabric,
                link,
                self.address,
                dst,
                port,
                payload,
                in_flight,
                context=fabric.context,
            )

    def _send_noted(
        self, notes: Any, link: Any, payload: bytes, dst: str, port: int, in_flight: list[int]
    ) -> None:
        """`_send`'s copies with a trace file recorded: each copy is named (by the
        `net.sent` event's index and the copy) and noted, so its arrival can be."""
        fabric = self.fabric
        for copy in range(in_flight[0]):
            ident = f"{fabric.trace.count - 1}.{copy}"
            notes("dgram", ident, self.node, dst, port, summary(payload))
            when = fabric.links.due(link, fabric.clock.now)
            fabric.at(
                when, _arrive_noted, ident, fabric, link, self.address, dst, port, payload,
                in_flight, context=fabric.context,
            )  # fmt: skip

    def abort(self) -> None:
        self.close()

    def close(self) -> None:
        if self.closing:
            return
        self._unbind()
        self.fabric.loop.call_soon(self._lost, context=self.context)

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0

    # -- arrivals and crashes ------------------------------------------------

    def receive(self, payload: bytes, source: Address, sender: str) -> bool:
        """Hand a datagram from node `sender` (at `source`) to the protocol; False if
        the endpoint would not take it."""
        if self.closing or (self.remote is not None and source != self.remote):
            return False
        observer = self.ref.observer  # a fault waits for a receive (`world._operations`)
        if observer is not None and observer("receive", "before"):
            return False
        trace = self.fabric.trace
        trace.emit("net.datagram", self.node, self.port, len(payload))
        # A digest of the bytes, never a copy.
        trace.deliver(route_word(sender, self.node), sender, self.node, payload)
        self.context.run(self._deliver, payload, source)
        if observer is not None:
            observer("receive", "after")
        return True

    def _deliver(self, payload: bytes, source: Address) -> None:
        sender: Any = ("::ffff:" + source[0], source[1], 0, 0) if self.mapped else source
        try:
            self.protocol.datagram_received(payload, sender)  # type: ignore[attr-defined]
        except Exception as exc:
            self.fabric.loop.call_exception_handler(
                {
                    "message": "protocol.datagram_received() failed",
                    "exception": exc,
                    "transport": self,
                }
            )

    def crash(self) -> None:
        """The node crashed: the port vanishes and the protocol hears nothing more."""
        self._unbind()

    def _unbind(self) -> None:
        self.closing = True
        ports = self.fabric.datagram_ports
        ports.release(self.node, self.port, self)
        self.fabric.forget(self.node, self.number)
        require(ports.get(self.node, self.port) is not self, "a closed endpoint leaves its port")

    def _lost(self) -> None:
        if self.ref.alive:
            self.protocol.connection_lost(None)


def _arrive(
    fabric: Fabric,
    link: Any,
    source: Address,
    dst: str,
    port: int,
    payload: bytes,
    in_flight: list[int],
) -> None:
    """A datagram reaches `dst`'s side of the link (runs in no node's context)."""
    if link.state == HELD:  # it waits, still in flight
        link.held += 1
        link.waiting.append(lambda: _redeliver(fabric, link, source, dst, port, payload, in_flight))
        return
    in_flight[0] -= 1
    if in_flight[0] < 0:
        broken("a datagram arrives at most as often as it was sent", link=link.loss_reason)
    if link.state != OPEN:
        link.dropped += 1
        fabric.trace.emit("net.dropped", link.src, dst, port, len(payload))
        return
    endpoint = fabric.datagram_ports.get(dst, port)
    if isinstance(endpoint, DatagramEndpoint):
        if endpoint.closing or not endpoint.ref.alive or (endpoint.node, endpoint.port) != (
            dst, port,
        ):  # fmt: skip
            broken("a datagram port is owned by a live, open endpoint bound there", end=endpoint)
        if endpoint.receive(payload, source, link.src):
            in_flight[1] += 1
            if in_flight[1] == 2:
                link.duplicates_seen += 1


def _redeliver(
    fabric: Fabric,
    link: Any,
    source: Address,
    dst: str,
    port: int,
    payload: bytes,
    in_flight: list[int],
) -> None:
    when = fabric.links.due(link, fabric.clock.now)
    fabric.at(
        when, _arrive, fabric, link, source, dst, port, payload, in_flight, context=fabric.context
    )


def _arrive_noted(
    ident: str,
    fabric: Fabric,
    link: Any,
    source: Address,
    dst: str,
    port: int,
    payload: bytes,
    in_flight: list[int],
) -> None:
    """`_arrive` for a datagram named in the notes: its fate is noted first (the
    same draws and scheduling as `_arrive` and `_redeliver`, so the same hash)."""
    notes = fabric.trace.notes
    if notes is not None:
        notes("dgram.at", ident, link.state)
    if link.state != HELD:
        _arrive(fabric, link, source, dst, port, payload, in_flight)
        return

    def redeliver() -> None:
        when = fabric.links.due(link, fabric.clock.now)
        fabric.at(
            when, _arrive_noted, ident, fabric, link, source, dst, port, payload, in_flight,
            context=fabric.context,
        )  # fmt: skip

    link.waiting.append(redeliver)
