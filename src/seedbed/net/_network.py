"""`SimNetwork`: the simulated network a seedbed loop serves its I/O from.

The loop's network methods (`create_connection`, `create_server`,
`create_datagram_endpoint`, `getaddrinfo`, `sock_connect`, ...) delegate
here once `loop.install_network(net)` is called, so unmodified asyncio code
(streams, protocols, aiohttp) runs on simulated links. The fault model is
stated where it is implemented: `_links` (latency, partitions, holds),
`_pipe` and `_stream` (streams), `_connect` (handshakes), `_datagram`
(loss, duplication, reordering), `_server` (listeners).

The caller's node is the one whose context is running (`current_ref()`);
network calls from outside any node are a usage error. aiohappyeyeballs'
real socket is never connected: `sock_connect` records the simulated
connection under it and `create_connection(sock=...)` claims it and closes
the real one. A socket the program binds itself is served at its bound
address (`_bound`): `create_server(sock=...)`, `create_datagram_endpoint(
sock=...)` and `sock_connect` take its port.

Contracts: a crashed node keeps no port, endpoint or claimable socket, and
its next incarnation starts with none; a name resolves only to a node of the
world, and an address handed out is one of a node's.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import socket
import ssl as ssl_module
from typing import Any

from seedbed._core import Stream
from seedbed._core.contract import require
from seedbed._core.identity import NodeDirectory, NodeRef, current_ref
from seedbed.errors import SimulationEscape, UsageError
from seedbed.net._addresses import LOOPBACK, port_number
from seedbed.net._bound import BoundSockets, served, unmapped
from seedbed.net._config import NetworkConfig
from seedbed.net._connect import Handshake, connect_outside
from seedbed.net._datagram import DatagramEndpoint
from seedbed.net._fabric import Fabric
from seedbed.net._links import DROPPED, HELD, OPEN, LinkState, LinkTraffic
from seedbed.net._server import SimServer, make_tls_wrap
from seedbed.net._stream import StreamEndpoint

_PROTOCOLS: dict[int, int] = {
    socket.SOCK_STREAM: socket.IPPROTO_TCP,
    socket.SOCK_DGRAM: socket.IPPROTO_UDP,
}


class SimNetwork:
    """A simulated network of named nodes; install with `loop.install_network(net)`."""

    def __init__(
        self, loop: Any, stream: Stream, config: NetworkConfig, nodes: NodeDirectory
    ) -> None:
        self._fabric = Fabric(loop, stream, config, nodes)
        self._claimable: dict[Any, StreamEndpoint] = {}  # sock_connect'ed sockets (lookup only)
        self._bound = BoundSockets(self._fabric)
        self.config = config

    def _current(self) -> NodeRef | None:
        """The node whose code is calling (a one-node network overrides it)."""
        return current_ref()

    def _caller(self, call: str) -> NodeRef:
        ref = self._current()
        if ref is None:
            raise UsageError(f"{call} was called outside any node: run network code on a node")
        return ref

    # -- names --------------------------------------------------------------

    def address_of(self, name: str) -> str:
        """The node's IPv4 address (`10.0.0.1` for the first node, ...)."""
        self._check_node(name)
        return self._fabric.addresses.address_of(name)

    def _check_node(self, name: str) -> None:
        if name not in self._fabric.nodes:
            raise UsageError(f"unknown node {name!r}; nodes are {self._fabric.nodes.names()!r}")

    # -- control --------------------------------------------------------------

    def partition(self, a: str, b: str, one_way: bool = False) -> None:
        """Drop traffic a -> b (and b -> a unless one_way)."""
        self._set(a, b, DROPPED, one_way)

    def repair(self, a: str, b: str, one_way: bool = False) -> None:
        """Undo `partition` (or `hold`): stalled streams resume."""
        self._set(a, b, OPEN, one_way)

    def hold(self, a: str, b: str, one_way: bool = False) -> None:
        """Queue traffic a -> b (and b -> a unless one_way); deliver nothing."""
        self._set(a, b, HELD, one_way)

    def release(self, a: str, b: str, one_way: bool = False) -> None:
        """Deliver the held backlog, in order per connection."""
        self._set(a, b, OPEN, one_way)

    def _set(self, a: str, b: str, state: int, one_way: bool) -> None:
        self._check_node(a)
        self._check_node(b)
        self._fabric.links.set(a, b, state, one_way)

    def isolate(self, node: str, *, among: list[str] | None = None, add: bool = False) -> None:
        """Partition `node` from every other node of `among` (default: all).

        A pattern: it replaces the last `isolate`/`random_halves` unless `add`.
        """
        self._check_node(node)
        self._fabric.links.isolate(node, among, add)

    def heal(self) -> None:
        """Repair every partition and release every hold."""
        self._fabric.links.heal()

    def stop_stalls(self) -> None:
        """No stall episode from now on; one in progress ends now."""
        self._fabric.links.stop_stalls(self._fabric.clock.now)

    def random_halves(
        self, *, among: list[str] | None = None, add: bool = False
    ) -> tuple[list[str], list[str]]:
        """Partition `among` (default: all nodes) into two halves drawn from the
        entropy; return them. A pattern, like `isolate`."""
        return self._fabric.links.random_halves(among, add)

    def cuts(self) -> list[tuple[str, str]]:
        """The links dropping traffic now, as (from, to) pairs, in node order."""
        return self._fabric.links.cuts()

    def links(self) -> list[LinkState]:
        """Every link made so far, in node order, with its state and waiting traffic."""
        return self._fabric.links.listing()

    def traffic(self, src: str, dst: str) -> LinkTraffic:
        """What faults did to src -> dst's traffic so far (counts; see `LinkTraffic`)."""
        return self._fabric.links.traffic(src, dst)

    def node_crashed(self, name: str) -> None:
        """Reset its connections, remove its listeners and endpoints, drop its traffic."""
        fabric = self._fabric
        fabric.trace.emit("net.crash", name)
        for endpoint in list(fabric.endpoints.get(name, {}).values()):
            endpoint.crash()
        for table in (fabric.stream_ports, fabric.datagram_ports):
            for owner in table.owners_on(name):
                if isinstance(owner, SimServer):
                    owner.crashed()
                elif isinstance(owner, Handshake):
                    owner.abandon()
        for sock, endpoint in list(self._claimable.items()):
            if endpoint.node == name:
                del self._claimable[sock]
        self._bound.crashed(name)
        self._check_gone(name)
        require(not fabric.endpoints.get(name), "a crashed node keeps no endpoint", node=name)

    def node_started(self, name: str) -> None:
        """A new incarnation runs: nothing listens until its code listens again."""
        self._fabric.trace.emit("net.start", name)
        self._check_gone(name)

    def _check_gone(self, name: str) -> None:
        """No port of any kind is bound on a crashed node (listeners, connects, datagrams)."""
        fabric = self._fabric
        for table in (fabric.stream_ports, fabric.datagram_ports):
            owners = table.owners_on(name)
            require(not owners, "a crashed node keeps no port", node=name, owners=owners)

    # -- name resolution ---------------------------------------------------------

    async def getaddrinfo(
        self,
        host: Any,
        port: Any,
        *,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[tuple[Any, ...]]:
        """Node names and addresses resolve; anything else is `socket.gaierror`."""
        if family not in (0, socket.AF_UNSPEC, socket.AF_INET):
            raise socket.gaierror(socket.EAI_FAMILY, "the simulated network is IPv4 only")
        if isinstance(host, bytes):
            host = host.decode()
        ref = self._current()
        if self._fabric.addresses.is_outside(host):
            address = host  # a numeric address resolves to itself, node or not
        else:
            node = self._fabric.addresses.resolve(host, ref.name if ref else "")
            address = host if host in LOOPBACK[:1] else self._fabric.addresses.address_of(node)
            require(
                address in LOOPBACK or self._fabric.addresses.name_at(address) == node,
                "a name resolves to its node's own address",
                host=host, node=node, address=address,
            )  # fmt: skip
        number = port_number(port)
        kinds = [type] if type else [socket.SOCK_STREAM, socket.SOCK_DGRAM]
        return [
            (socket.AF_INET, kind, proto or _PROTOCOLS.get(kind, 0), "", (address, number))
            for kind in kinds
        ]

    async def getnameinfo(self, sockaddr: tuple[Any, ...], flags: int = 0) -> tuple[str, str]:
        host, port = sockaddr[0], sockaddr[1]
        return (self._fabric.addresses.name_at(host) or host, str(port))

    def _resolve(self, host: Any, ref: NodeRef) -> str:
        node = self._fabric.addresses.node_for(host, ref.name)
        if node is None:
            raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known: {host!r}")
        require(node in self._fabric.nodes, "a host resolves to a known node", node=node)
        return node

    # -- sockets the program binds itself (see `_bound`) ---------------------------

    def bind_socket(self, sock: Any, address: Any) -> bool:
        """Serve `sock.bind(address)` on the calling node; False: not ours to serve."""
        ref = self._current()
        if ref is None or not served(sock) or not isinstance(address, tuple) or len(address) < 2:
            return False
        host = unmapped(address[0])
        if self._fabric.addresses.node_for(host or None, ref.name) != ref.name:
            raise OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address")
        self._bound.bind(
            sock, ref.name, self._bound_host(address[0], sock.family), port_number(address[1])
        )
        return True

    def _bound_host(self, host: Any, family: int) -> str:
        """The host `getsockname` reports for a bind to `host`."""
        if isinstance(host, bytes):
            host = host.decode()
        return str(host) if host else ("::" if family == socket.AF_INET6 else "0.0.0.0")

    def socket_name(self, sock: Any) -> Any:
        """What `getsockname` answers for a socket `bind_socket` served (None: others)."""
        return self._bound.name(sock)

    def release_socket(self, sock: Any) -> None:
        """A served socket closed: its port is free again."""
        self._bound.release(sock)

    # -- streams --------------------------------------------------------------

    async def sock_connect(self, sock: Any, address: tuple[Any, ...]) -> None:
        """Connect on the simulated network; `create_connection(sock=sock)` claims it."""
        ref = self._caller("loop.sock_connect()")
        if self._fabric.addresses.is_outside(address[0]):
            await connect_outside(self._fabric, ref, address[0], port_number(address[1]))
        dst = self._resolve(unmapped(address[0]), ref)
        bound = self._bound.take(sock, socket.SOCK_STREAM)  # connects from its own port
        handshake = Handshake(
            self._fabric, ref, contextvars.copy_context(), dst, port_number(address[1]),
            local_port=bound.port if bound is not None else 0,
        )  # fmt: skip
        self._claimable[sock] = await handshake.run()

    async def create_connection(
        self,
        protocol_factory: Any,
        host: Any = None,
        port: Any = None,
        *,
        ssl: Any = None,
        sock: Any = None,
        server_hostname: str | None = None,
        ssl_handshake_timeout: float | None = None,
        ssl_shutdown_timeout: float | None = None,
        **ignored: Any,
    ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
        """Open a stream to `host:port` (or claim a `sock_connect`'ed socket)."""
        ref = self._caller("loop.create_connection()")
        if sock is not None:
            endpoint = self._claim(sock)
        else:
            if self._fabric.addresses.is_outside(host):
                await connect_outside(self._fabric, ref, host, port_number(port))
            dst = self._resolve(host, ref)
            context = contextvars.copy_context()
            endpoint = await Handshake(self._fabric, ref, context, dst, port_number(port)).run()
        protocol = protocol_factory()
        if not ssl:
            endpoint.context.run(endpoint.attach, protocol)
            return endpoint, protocol
        return await self._start_tls_client(
            endpoint, protocol, ssl, server_hostname or host,
            ssl_handshake_timeout=ssl_handshake_timeout, ssl_shutdown_timeout=ssl_shutdown_timeout,
        )  # fmt: skip

    def _claim(self, sock: Any) -> StreamEndpoint:
        endpoint = self._claimable.pop(sock, None)
        if endpoint is None:
            raise UsageError(
                "create_connection(sock=...) needs a socket connected by loop.sock_connect() "
                "on the simulated network"
            )
        sock.close()  # the real socket was never used
        return endpoint

    async def _start_tls_client(
        self, endpoint: StreamEndpoint, protocol: Any, context: Any, hostname: Any, **options: Any
    ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
        from asyncio import sslproto

        if context is True:
            context = ssl_module.create_default_context()
        loop = self._fabric.loop
        waiter = loop.create_future()
        tls = sslproto.SSLProtocol(
            loop, protocol, context, waiter, server_side=False, server_hostname=hostname, **options
        )
        endpoint.context.run(endpoint.attach, tls)
        try:
            await waiter
        except BaseException:
            endpoint.abort()
            raise
        return tls._app_transport, protocol

    async def create_server(
        self,
        protocol_factory: Any,
        host: Any = None,
        port: Any = None,
        *,
        ssl: Any = None,
        sock: Any = None,
        start_serving: bool = True,
        ssl_handshake_timeout: float | None = None,
        ssl_shutdown_timeout: float | None = None,
        **ignored: Any,
    ) -> SimServer:
        """Listen on this node's `port` (0: a free one); every host means this node."""
        ref = self._caller("loop.create_server()")
        if sock is not None:
            bound = self._bound.take(sock, socket.SOCK_STREAM)
            if bound is None:
                raise UsageError(
                    "create_server(sock=...) needs a socket bound inside the run (sock.bind()); "
                    "or pass host and port"
                )
            host, port = None, bound.port
            sock.close()  # never bound or listened for real
        for one in host if isinstance(host, list | tuple) else [host]:
            if self._resolve(one, ref) != ref.name:
                raise OSError(99, f"cannot listen on {one!r}: not an address of {ref.name}")
        wrap = None
        if ssl:
            timeouts = {
                "ssl_handshake_timeout": ssl_handshake_timeout,
                "ssl_shutdown_timeout": ssl_shutdown_timeout,
            }
            wrap = make_tls_wrap(self._fabric.loop, ssl, server_side=True, **timeouts)
        context = contextvars.copy_context()
        server = SimServer(self._fabric, ref, port_number(port), protocol_factory, context, wrap)
        self._fabric.trace.emit("net.listen", ref.name, server.port)
        if start_serving:
            await server.start_serving()
            await asyncio.sleep(0)
        return server

    # -- datagrams ------------------------------------------------------------

    async def create_datagram_endpoint(
        self,
        protocol_factory: Any,
        local_addr: tuple[Any, ...] | None = None,
        remote_addr: tuple[Any, ...] | None = None,
        *,
        sock: Any = None,
        **ignored: Any,
    ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
        """Bind a datagram port on this node (0 or no local_addr: a free one)."""
        ref = self._caller("loop.create_datagram_endpoint()")
        if sock is not None:
            return self._datagram_from(sock, ref, protocol_factory, local_addr, remote_addr)
        if local_addr is not None and self._resolve(local_addr[0], ref) != ref.name:
            raise OSError(99, f"cannot bind {local_addr!r}: not an address of {ref.name}")
        remote = None
        if remote_addr is not None and self._fabric.addresses.is_outside(remote_addr[0]):
            remote = (remote_addr[0], port_number(remote_addr[1]))  # sends to it vanish
        elif remote_addr is not None:
            remote = (
                self._fabric.addresses.address_of(self._resolve(remote_addr[0], ref)),
                port_number(remote_addr[1]),
            )
        port = port_number(local_addr[1]) if local_addr is not None else 0
        protocol = protocol_factory()
        endpoint = DatagramEndpoint(
            self._fabric, ref, contextvars.copy_context(), port, remote, protocol
        )
        endpoint.context.run(protocol.connection_made, endpoint)
        return endpoint, protocol

    def _datagram_from(
        self, sock: Any, ref: NodeRef, factory: Any, local: Any, remote: Any
    ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
        """`create_datagram_endpoint(sock=...)`: an endpoint at the socket's bound port."""
        if local is not None or remote is not None:
            raise ValueError(
                "socket modifier keyword arguments can not be used when sock is specified."
            )
        bound = self._bound.take(sock, socket.SOCK_DGRAM)
        if bound is None:
            raise UsageError(
                "create_datagram_endpoint(sock=...) needs a UDP socket bound inside the run "
                "(sock.bind()); or pass local_addr"
            )
        sock.close()  # never bound for real
        protocol = factory()
        six = bound.family == socket.AF_INET6
        endpoint = DatagramEndpoint(
            self._fabric, ref, contextvars.copy_context(), bound.port, None, protocol,
            mapped=six, sockname=bound.name,
        )  # fmt: skip
        endpoint.context.run(protocol.connection_made, endpoint)
        return endpoint, protocol

    # -- what a simulated network cannot serve --------------------------------

    def _real_socket(self, name: str) -> SimulationEscape:
        """Recorded by the loop, so the run fails even if the caller swallows it."""
        escape: SimulationEscape = self._fabric.loop.escape(  # type: ignore[attr-defined]
            f"loop.{name}() on a real socket",
            "use streams (asyncio.open_connection/start_server) or loop.create_connection/"
            "create_server/create_datagram_endpoint, which the simulated network serves",
        )
        return escape

    def __getattr__(self, name: str) -> Any:
        """The loop's other I/O methods: refused, and recorded so a swallow cannot hide it.

        Real-socket I/O (`sock_recv`, `sock_sendall`...) gets advice on what to use
        instead; unix sockets, pipes, subprocesses and sendfile are not simulated.
        """
        if name in _REAL_SOCKET_IO:
            escape = self._real_socket(name)
        elif name in _UNSERVED:
            escape = self._fabric.loop.escape(  # type: ignore[attr-defined]
                f"loop.{name}()",
                "the simulated network serves TCP-like streams and datagrams only",
            )
        else:
            raise AttributeError(name)

        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise escape

        return refuse


_REAL_SOCKET_IO = frozenset(
    {
        "sock_accept", "sock_recv", "sock_recv_into", "sock_recvfrom", "sock_recvfrom_into",
        "sock_sendall", "sock_sendto", "sock_sendfile", "connect_accepted_socket",
    }
)  # fmt: skip
_UNSERVED = frozenset(
    {
        "sendfile", "start_tls", "create_unix_connection", "create_unix_server",
        "connect_read_pipe", "connect_write_pipe", "subprocess_exec", "subprocess_shell",
    }
)  # fmt: skip
