"""The stream handshake: connect, accept, refuse or time out.

Fault model. A connect's SYN takes one drawn latency to reach the far node
and its answer one more to come back. On arrival:

- a link either way held: the SYN waits at it, and goes on after a fresh
  latency when it is released;
- a link either way partitioned: the SYN is lost, and retransmitted as TCP
  does, 1, 3, 7, 15... seconds after the connect began: the first
  retransmission after the partition is repaired goes through;
- either way, a connect not answered `connect_timeout` after it began fails
  with `TimeoutError`, and a SYN still waiting then is dropped;
- no listener on that port (or the node is down): a reset comes back and
  the connect fails with `ConnectionRefusedError`;
- a listener: both ends exist from that instant (the server's may wait in
  the accept backlog); the connector gets its end when the answer lands.

A connect abandoned before the answer lands (cancelled, or its node crashed)
resets the server's end, as the kernel would.

Contracts: a SYN finds at most the one listener bound at its (node, port),
and a crashed node's listener is no longer there; a connection opens only
across open links.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
from typing import NoReturn

from seedbed._core.contract import require
from seedbed._core.identity import NodeRef
from seedbed.net._fabric import Fabric
from seedbed.net._links import HELD, OPEN, Link
from seedbed.net._pipe import Pipe
from seedbed.net._server import SimServer
from seedbed.net._stream import StreamEndpoint

# TCP's first SYN retransmission comes 1 s after the SYN, each later one after
# twice the previous wait: 1, 3, 7, 15... seconds after the connect began.
_FIRST_RETRANSMIT = 1_000_000_000


async def connect_outside(fabric: Fabric, ref: NodeRef, host: str, port: int) -> NoReturn:
    """A connect to an address no node has: its SYNs go unanswered, and it
    fails with `TimeoutError` `connect_timeout` after it began (a real host
    whose network has no route there sees the same)."""
    fabric.trace.emit("net.connect.outside", ref.name, host, port)
    deadline = fabric.loop.create_future()
    timer = fabric.at(fabric.clock.now + fabric.links.timing.connect_timeout, _settle, deadline)
    try:
        await deadline
    finally:
        timer.cancel()
    raise TimeoutError(
        errno.ETIMEDOUT,
        f"connect to {host}:{port} timed out: no node has that address "
        "(the simulated network reaches only its own nodes)",
    )


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Handshake:
    """One connect in progress from `ref`'s node to `dst:port`."""

    __slots__ = (
        "context",
        "dst",
        "fabric",
        "future",
        "port",
        "ref",
        "sockname",
        "started",
        "timing_out",
    )

    def __init__(
        self,
        fabric: Fabric,
        ref: NodeRef,
        context: contextvars.Context,
        dst: str,
        port: int,
        local_port: int = 0,  # a socket the program bound: its own port (0: a free one)
    ) -> None:
        self.fabric = fabric
        self.ref = ref
        self.context = context
        self.dst = dst
        self.port = port
        self.started = fabric.clock.now
        self.timing_out = False  # the connect's deadline is scheduled
        self.future: asyncio.Future[StreamEndpoint] = fabric.loop.create_future()
        src = ref.name
        local_port = fabric.stream_ports.bind(src, local_port, self)
        self.sockname = (fabric.addresses.address_of(src), local_port)

    async def run(self) -> StreamEndpoint:
        """Send the SYN and wait for the outcome."""
        fabric = self.fabric
        observer = self.ref.observer  # a fault waits for a connect (`world._operations`)
        if observer is not None and observer("connect", "before"):
            return await self.future  # the node is dead: never answered
        link = fabric.links.get(self.ref.name, self.dst)
        fabric.trace.emit("net.connect", self.ref.name, self.dst, self.port)
        arrival = fabric.links.due(link, self.started)
        fabric.at(arrival, self._syn_arrives, context=fabric.context)
        try:
            return await self.future
        except BaseException:
            self._release_port()
            raise

    def _syn_arrives(self) -> None:
        if self.future.done():
            return  # the connector gave up (timed out, cancelled): no more SYNs
        fabric = self.fabric
        src, dst = self.ref.name, self.dst
        links = fabric.links
        for link in (links.get(src, dst), links.get(dst, src)):
            if link.state != OPEN:
                self._wait_for(link)
                return
        server = fabric.stream_ports.get(dst, self.port)
        if isinstance(server, SimServer):
            require(
                (server.node, server.port) == (dst, self.port) and server.ref.alive,
                "the listener at a (node, port) is the live one bound there",
                server=server, at=(dst, self.port),
            )  # fmt: skip
        back = links.due(links.get(dst, src), fabric.clock.now)
        if (
            not isinstance(server, SimServer)
            or not server.accepting()
            or not fabric.nodes.is_up(dst)
        ):
            fabric.trace.emit("net.refused", src, dst, self.port)
            error = ConnectionRefusedError(
                errno.ECONNREFUSED, f"connect to {dst}:{self.port} refused"
            )
            fabric.at(back, self._fail, error, context=fabric.context)
            return
        client_end = self._open(server)
        fabric.at(back, self._answer, client_end, context=fabric.context)

    def _wait_for(self, link: Link) -> None:
        """The SYN found `link` (either way) closed: wait for it to open, until the deadline."""
        fabric = self.fabric
        if not self.timing_out:
            self.timing_out = True
            deadline = self.started + fabric.links.timing.connect_timeout
            timeout = TimeoutError(errno.ETIMEDOUT, f"connect to {self.dst}:{self.port} timed out")
            fabric.at(deadline, self._fail, timeout, context=fabric.context)
        link.blocked += 1  # a connect waiting at a closed link: a fault the program feels
        link.waiting.append(self._released if link.state == HELD else self._repaired)

    def _released(self) -> None:
        """The hold is over: the held SYN travels on after a fresh latency."""
        self._resend(self.fabric.clock.now)

    def _repaired(self) -> None:
        """The partition is over: the next retransmission goes through."""
        now = self.fabric.clock.now
        wait = _FIRST_RETRANSMIT
        retransmit = self.started + wait
        while retransmit < now:
            wait *= 2
            retransmit += wait
        self._resend(retransmit)

    def _resend(self, sent: int) -> None:
        if self.future.done():
            return
        fabric = self.fabric
        link = fabric.links.get(self.ref.name, self.dst)
        arrival = fabric.links.due(link, sent)
        fabric.at(arrival, self._syn_arrives, context=fabric.context)

    def _open(self, server: SimServer) -> StreamEndpoint:
        """Create both ends at the server's node; hand the server its end."""
        fabric = self.fabric
        src, dst = self.ref.name, self.dst
        require(
            fabric.links.get(src, dst).state == OPEN == fabric.links.get(dst, src).state,
            "a connection opens only across open links",
            src=src, dst=dst,
        )  # fmt: skip
        up = Pipe(fabric, fabric.links.get(src, dst))
        down = Pipe(fabric, fabric.links.get(dst, src))
        server_addr = (fabric.addresses.address_of(dst), self.port)
        client = StreamEndpoint(
            fabric, self.ref, self.context, up, down, self.sockname, server_addr
        )
        client.port_release = self._release_port
        accepted = StreamEndpoint(
            fabric, server.ref, server.context.copy(), down, up, server_addr, self.sockname
        )
        fabric.trace.emit("net.accept", src, dst, self.port, client.number)
        server.admit(accepted)
        return client

    def _answer(self, client: StreamEndpoint) -> None:
        if self.future.done() or not self.ref.alive:
            client.crash()  # nobody waits for this end: reset the server's
            return
        self.future.set_result(client)
        if self.ref.observer is not None:
            self.ref.observer("connect", "after")

    def _fail(self, error: OSError) -> None:
        if not self.future.done() and self.ref.alive:  # a crashed connector hears nothing
            self.future.set_exception(error)

    def abandon(self) -> None:
        """The connecting node crashed: free its port (the answer finds it dead)."""
        self._release_port()

    def _release_port(self) -> None:
        self.fabric.stream_ports.release(self.ref.name, self.sockname[1], self)
