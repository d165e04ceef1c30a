"""Listening servers: our own `asyncio.AbstractServer` (asyncio's changed in 3.13).

Fault model: a server listens on one port of one node. A connect to a port
with no listener (never bound, closed, or gone with a crashed node) is
refused. Connections that arrive while the server is not serving complete
the handshake and wait in the backlog, as a kernel's accept queue does, until
`start_serving`. A crash of the node removes the listener at once, resets
the backlog, and never calls the protocol factory again.

`wait_closed` follows the running Python: from 3.12 it also waits for the
server's connections to close; on 3.11 it returns once the server is closed.

Contracts: a server holds its port while it listens and leaves it when closed
or crashed; it admits connections only while accepting, ends on its own node.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import sys
from collections.abc import Callable
from typing import Any

from seedbed._core.contract import require
from seedbed._core.identity import NodeRef
from seedbed.net._fabric import Fabric
from seedbed.net._stream import SimSocket, StreamEndpoint

ProtocolFactory = Callable[[], asyncio.BaseProtocol]
Wrap = Callable[[asyncio.BaseProtocol], asyncio.BaseProtocol]
_WAIT_FOR_CONNECTIONS = sys.version_info >= (3, 12)


class SimServer(asyncio.AbstractServer):
    """A listener on `node:port` that accepts simulated connections."""

    def __init__(
        self,
        fabric: Fabric,
        ref: NodeRef,
        port: int,
        factory: ProtocolFactory,
        context: contextvars.Context,
        wrap: Wrap | None,
    ) -> None:
        self.fabric = fabric
        self.ref = ref
        self.node = ref.name
        self.port = fabric.stream_ports.bind(self.node, port, self)
        self.context = context  # accepted ends run in copies of it
        self._factory = factory
        self._wrap = wrap
        self._serving = False
        self._closed = False
        self._backlog: list[StreamEndpoint] = []
        self._connections: dict[int, StreamEndpoint] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self._forever: asyncio.Future[None] | None = None
        self._sockets: tuple[SimSocket, ...] = (
            SimSocket(socket.SOCK_STREAM, (fabric.addresses.address_of(self.node), self.port)),
        )

    def __repr__(self) -> str:
        return f"<SimServer {self.node}:{self.port} {'serving' if self._serving else 'idle'}>"

    # -- accepting ------------------------------------------------------------

    def accepting(self) -> bool:
        """Whether a connect to this port completes (the listener exists)."""
        if self._closed:
            return False
        require(
            self.fabric.stream_ports.get(self.node, self.port) is self,
            "a listening server holds its port",
            server=self,
        )
        return self.ref.alive

    def admit(self, endpoint: StreamEndpoint) -> None:
        """A handshake completed: accept now if serving, else queue."""
        require(
            self.accepting() and endpoint.node == self.node and not endpoint.lost,
            "a listener admits live ends on its own node, only while accepting",
            server=self, end=endpoint,
        )  # fmt: skip
        self._connections[endpoint.number] = endpoint
        endpoint.on_lost = self._connection_gone
        if self._serving:
            endpoint.context.run(self._accept, endpoint)
        else:
            self._backlog.append(endpoint)

    def _accept(self, endpoint: StreamEndpoint) -> None:
        if endpoint.lost:
            return
        protocol = self._factory()
        if self._wrap is not None:
            protocol = self._wrap(protocol)
        endpoint.attach(protocol)

    def _connection_gone(self, endpoint: StreamEndpoint) -> None:
        self._connections.pop(endpoint.number, None)
        self._wake_if_done()

    def crashed(self) -> None:
        """The node crashed: stop listening, drop the backlog, never call back."""
        self._closed = True
        self._serving = False
        self._sockets = ()
        self._backlog.clear()
        self._leave_port()

    def _leave_port(self) -> None:
        """Free the port; it must then belong to someone else or no one."""
        ports = self.fabric.stream_ports
        ports.release(self.node, self.port, self)
        require(ports.get(self.node, self.port) is not self, "a closed listener leaves its port")

    # -- asyncio.AbstractServer -----------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._serving = False
        self._sockets = ()
        self._leave_port()
        backlog, self._backlog = self._backlog, []
        for endpoint in backlog:
            endpoint.abort()
        if self._forever is not None and not self._forever.done():
            self._forever.cancel()
        self._wake_if_done()

    def close_clients(self) -> None:
        for endpoint in list(self._connections.values()):
            endpoint.close()

    def abort_clients(self) -> None:
        for endpoint in list(self._connections.values()):
            endpoint.abort()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self.fabric.loop

    def is_serving(self) -> bool:
        return self._serving

    @property
    def sockets(self) -> tuple[SimSocket, ...]:
        return self._sockets

    async def start_serving(self) -> None:
        if self._closed or self._serving:
            return
        self._serving = True
        backlog, self._backlog = self._backlog, []
        for endpoint in backlog:
            endpoint.context.run(self._accept, endpoint)

    async def serve_forever(self) -> None:
        if self._forever is not None:
            raise RuntimeError(f"server {self!r} is already being awaited on serve_forever()")
        if self._closed:
            raise RuntimeError(f"server {self!r} is closed")
        await self.start_serving()
        self._forever = self.fabric.loop.create_future()
        try:
            await self._forever
        except asyncio.CancelledError:
            try:
                self.close()
                await self.wait_closed()
            finally:
                raise
        finally:
            self._forever = None

    async def wait_closed(self) -> None:
        if self._done() or (self._closed and not _WAIT_FOR_CONNECTIONS):
            return
        waiter: asyncio.Future[None] = self.fabric.loop.create_future()
        self._waiters.append(waiter)
        await waiter

    def _done(self) -> bool:
        return self._closed and (not _WAIT_FOR_CONNECTIONS or not self._connections)

    def _wake_if_done(self) -> None:
        if not self._done():
            return
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


def make_tls_wrap(
    loop: asyncio.AbstractEventLoop, ssl: Any, *, server_side: bool, **options: Any
) -> Wrap:
    """Wrap each accepted protocol in asyncio's TLS protocol (a real handshake, in memory)."""
    from asyncio import sslproto

    def wrap(app_protocol: asyncio.BaseProtocol) -> asyncio.BaseProtocol:
        waiter = loop.create_future()
        return sslproto.SSLProtocol(
            loop, app_protocol, ssl, waiter, server_side=server_side, **options
        )

    return wrap
