"""The loop's I/O methods: served by a simulated world's network, or a plain loop's.

`aio` never imports the network: a world installs an object with the same
method names (`install_network`), and each loop method awaits it. A loop
with none installed (a plain `seedbed.run`, `new_event_loop`,
`EventLoopPolicy`) gets, at its first network call, the network that
`seedbed.net` registered here for plain loops (`register_plain_network`):
loopback only, see `seedbed.net._loopback`. Without either, and for pipes,
subprocesses and file-descriptor watching, the call raises
`SimulationEscape`, since none of them can be made deterministic.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVarTuple, Unpack

from seedbed.errors import SimulationEscape

if TYPE_CHECKING:
    from seedbed.aio._host import RunHost

Ts = TypeVarTuple("Ts")
# Makes a plain loop's network from the loop (registered by `seedbed.net`).
_plain_network: Callable[[Any], Any] | None = None


def register_plain_network(factory: Callable[[Any], Any] | None) -> None:
    """Let `factory(loop)` serve the network methods of loops without a world."""
    global _plain_network
    _plain_network = factory


def _network_method(name: str) -> Callable[..., Any]:
    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        network = self._network if self._network is not None else self.plain_network()
        if network is None:
            raise self.refuse_io(name)
        return await getattr(network, name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Served by the simulated network; refused outside a world ({name})."
    return method


def _refused_method(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise self.refuse_io(name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Refused: {name} has no deterministic simulation."
    return method


class IOMethods(asyncio.AbstractEventLoop):
    """The I/O half of `SeedbedLoop`."""

    _network: Any
    _host: RunHost

    def install_network(self, network: Any) -> None:
        """Let a simulated world serve this loop's network methods."""
        self._network = network

    def plain_network(self) -> Any:
        """The network of a loop no world gave one: made on first use, if registered."""
        if self._network is None and _plain_network is not None:
            self._network = _plain_network(self)
        return self._network

    def bind_socket(self, sock: Any, address: Any) -> bool:
        """Whether this loop's network served `sock.bind(address)` (see `_sockets`)."""
        network = self._network if self._network is not None else self.plain_network()
        serve = getattr(network, "bind_socket", None)
        return bool(serve(sock, address)) if serve is not None else False

    def socket_name(self, sock: Any) -> Any:
        """The simulated address of a socket `bind_socket` served, else None."""
        answer = getattr(self._network, "socket_name", None)
        return answer(sock) if answer is not None else None

    def release_socket(self, sock: Any) -> None:
        """A socket `bind_socket` served was closed: its simulated port is free."""
        release = getattr(self._network, "release_socket", None)
        if release is not None:
            release(sock)

    create_connection = _network_method("create_connection")
    create_server = _network_method("create_server")
    create_datagram_endpoint = _network_method("create_datagram_endpoint")
    getaddrinfo = _network_method("getaddrinfo")
    getnameinfo = _network_method("getnameinfo")
    sock_connect = _network_method("sock_connect")
    sock_accept = _network_method("sock_accept")
    sock_recv = _network_method("sock_recv")
    sock_recv_into = _network_method("sock_recv_into")
    sock_recvfrom = _network_method("sock_recvfrom")
    sock_recvfrom_into = _network_method("sock_recvfrom_into")
    sock_sendall = _network_method("sock_sendall")
    sock_sendto = _network_method("sock_sendto")
    sock_sendfile = _network_method("sock_sendfile")
    sendfile = _network_method("sendfile")
    start_tls = _network_method("start_tls")
    connect_accepted_socket = _network_method("connect_accepted_socket")
    create_unix_connection = _network_method("create_unix_connection")
    create_unix_server = _network_method("create_unix_server")
    connect_read_pipe = _network_method("connect_read_pipe")
    connect_write_pipe = _network_method("connect_write_pipe")
    subprocess_exec = _network_method("subprocess_exec")
    subprocess_shell = _network_method("subprocess_shell")
    remove_reader = _refused_method("remove_reader")
    remove_writer = _refused_method("remove_writer")

    def add_reader(self, fd: Any, callback: Callable[[Unpack[Ts]], Any], *args: *Ts) -> None:
        """Refused: file descriptors are real I/O, outside any simulation."""
        raise self.refuse_io("add_reader")

    def add_writer(self, fd: Any, callback: Callable[[Unpack[Ts]], Any], *args: *Ts) -> None:
        """Refused: file descriptors are real I/O, outside any simulation."""
        raise self.refuse_io("add_writer")

    def refuse_io(self, name: str) -> SimulationEscape:
        return self._host.escape(
            f"loop.{name}()",
            "this run has no simulated network or processes; run networked code "
            "on the nodes of a seedbed.Simulation",
        )
