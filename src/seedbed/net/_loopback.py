"""Loopback in a plain loop: a one-node simulated network for code outside any world.

A test suite on seedbed's loop (`seedbed.run`, `new_event_loop`,
`EventLoopPolicy`, no `Simulation`) starts servers on `127.0.0.1` and
connects to them: aiohttp's `TestServer`/`TestClient`, pytest-aiohttp's
fixtures, an httpx client against an in-process server. Such traffic never
leaves the process, so it can be simulated like a world's: the first network
call of a plain loop installs a `LoopbackNetwork`, a `SimNetwork` with one
node, `localhost`, whose address is `127.0.0.1`. Streams, datagrams, flow
control, `getsockname`/`getpeername` and port 0 (the next free port from
49152 upward, deterministically) are the world's own code.

What stays refused, with the message a plain loop gives today: any host that
is not loopback or wildcard (`127.0.0.1`, `localhost`, `::1`, `0.0.0.0`,
`::`, `""`), and real-socket I/O (`sock_recv`, `sock_sendall`...).
aiohttp's test server binds a real `socket.socket` and hands it to
`create_server(sock=...)`: inside a plain run, a TCP or UDP `bind` on a
loopback or wildcard address is served as a world's node serves it
(`_bound`: the port is taken on the simulated network and nothing is bound
for real; `close()` frees it), and `getsockname` on that socket answers the
simulated address; a bind elsewhere still escapes.

The fault model is a fast, healthy loopback: latency 10-100 us (mean 20 us,
exponential, no tail), no loss; a `Simulation` keeps its own network and
config.
"""

from __future__ import annotations

from typing import Any

from seedbed._core.identity import NodeRef, new_node_context
from seedbed.aio import _io
from seedbed.net._addresses import ANY, LOOPBACK, AddressBook
from seedbed.net._config import NetworkConfig
from seedbed.net._network import _REAL_SOCKET_IO, _UNSERVED, SimNetwork

LOCAL = "localhost"  # the one node's name
LOCAL_ADDRESS = "127.0.0.1"
LOCAL_HOSTS = frozenset((*LOOPBACK, *ANY, LOCAL_ADDRESS))
LOOPBACK_CONFIG = NetworkConfig(
    latency_min=0.00001, latency_mean=0.00002, latency_max=0.0001, latency_model="exponential"
)


class _OneNode:
    """The `NodeDirectory` of a one-node network: the node is always up."""

    def __init__(self, ref: NodeRef) -> None:
        self.ref = ref
        self.context = new_node_context(ref)

    def context_of(self, name: str) -> Any:
        if name != LOCAL:
            raise KeyError(name)
        return self.context

    def is_up(self, name: str) -> bool:
        return name == LOCAL

    def ref_of(self, name: str) -> NodeRef:
        if name != LOCAL:
            raise KeyError(name)
        return self.ref

    def names(self) -> list[str]:
        return [LOCAL]

    def __contains__(self, name: object) -> bool:
        return name == LOCAL


def _is_local(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, list | tuple):
        return all(_is_local(one) for one in host)
    return host is None or host in LOCAL_HOSTS


class LoopbackNetwork(SimNetwork):
    """A plain loop's network: one node, loopback addresses only (module docstring)."""

    def __init__(self, loop: Any) -> None:
        self._ref = NodeRef(LOCAL, 0)
        directory = _OneNode(self._ref)
        super().__init__(loop, loop.entropy.stream("net loopback"), LOOPBACK_CONFIG, directory)
        self._fabric.addresses = AddressBook([], fixed={LOCAL: LOCAL_ADDRESS})
        self._loop = loop

    def _current(self) -> NodeRef:
        return self._ref  # no node context in a plain loop: all code is the one node's

    def _refused(self, name: str) -> Any:
        return self._loop.refuse_io(name)

    # -- what is served: loopback and wildcard hosts ------------------------------

    async def getaddrinfo(self, host: Any, port: Any, **options: Any) -> list[tuple[Any, ...]]:
        if not _is_local(host):
            raise self._refused("getaddrinfo")
        return await super().getaddrinfo(host, port, **options)

    async def getnameinfo(self, sockaddr: tuple[Any, ...], flags: int = 0) -> tuple[str, str]:
        if not _is_local(sockaddr[0]):
            raise self._refused("getnameinfo")
        return await super().getnameinfo(sockaddr, flags)

    async def sock_connect(self, sock: Any, address: tuple[Any, ...]) -> None:
        if not _is_local(address[0]):
            raise self._refused("sock_connect")
        await super().sock_connect(sock, (LOCAL_ADDRESS, *address[1:2]))

    async def create_connection(
        self, protocol_factory: Any, host: Any = None, port: Any = None, **options: Any
    ) -> Any:
        if options.get("sock") is None and not _is_local(host):
            raise self._refused("create_connection")
        return await super().create_connection(protocol_factory, host, port, **options)

    async def create_server(
        self, protocol_factory: Any, host: Any = None, port: Any = None, **options: Any
    ) -> Any:
        sock = options.get("sock")
        if sock is not None and self.socket_name(sock) is None:
            raise self._refused("create_server")  # a socket bound for real: not simulated
        if sock is None and not _is_local(host):
            raise self._refused("create_server")
        return await super().create_server(protocol_factory, host, port, **options)

    async def create_datagram_endpoint(
        self, protocol_factory: Any, local_addr: Any = None, remote_addr: Any = None, **options: Any
    ) -> Any:
        sock = options.get("sock")
        if sock is not None and self.socket_name(sock) is None:
            raise self._refused("create_datagram_endpoint")  # bound for real: not simulated
        for address in (local_addr, remote_addr):
            if address is not None and not _is_local(address[0]):
                raise self._refused("create_datagram_endpoint")
        return await super().create_datagram_endpoint(
            protocol_factory, local_addr=local_addr, remote_addr=remote_addr, **options
        )

    # -- real sockets bound on loopback (aiohttp's TestServer, aioquic) -------------

    def bind_socket(self, sock: Any, address: Any) -> bool:
        """Serve a loopback or wildcard bind (see `_bound`); False: bind for real."""
        if not isinstance(address, tuple) or not address or not _is_local(address[0]):
            return False
        return super().bind_socket(sock, address)

    def _bound_host(self, host: Any, family: int) -> str:
        """A wildcard bind reports the one node's address, as its servers do."""
        return super()._bound_host(host or LOCAL_ADDRESS, family)

    def __getattr__(self, name: str) -> Any:
        """Real-socket and unserved I/O: refused as in a plain loop without a network."""
        if name not in _REAL_SOCKET_IO and name not in _UNSERVED:
            raise AttributeError(name)
        escape = self._refused(name)

        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise escape

        return refuse


_io.register_plain_network(LoopbackNetwork)
