"""Sockets a program binds itself, served on the simulated network at their address.

A program may make its own `socket.socket`, `bind()` it and hand it to the
loop: aioquic's `connect()` binds a dual-stack UDP socket for
`create_datagram_endpoint(sock=...)`, aiohttp's test server binds a TCP one
for `create_server(sock=...)`, a client may bind before `sock_connect` and
`create_connection(sock=...)`. Inside a run `bind` is offered to the loop's
network first (`seedbed.aio._sockets`). A TCP or UDP bind (IPv4 or IPv6) to
an address of the calling node (its own, loopback or a wildcard) takes the
port on the simulated network at once, as a kernel does at bind (0: the next
free port, in order), and nothing is bound for real. `getsockname` answers
the bound address, `close()` (or the socket's collection) frees the port,
and the loop method that is handed the socket takes the port over.

Fault model: a port has one owner; a bind to a taken port fails with
`EADDRINUSE`, to an address the node does not have with `EADDRNOTAVAIL`, a
second bind of one socket with `EINVAL`, as on a real host. A crashed
node's claims go with it.

Contracts: a claim holds its port in its table until it is released, taken
or its node crashes, and then holds nothing.
"""

from __future__ import annotations

import errno
import socket
import weakref
from typing import Any

from seedbed._core.contract import require
from seedbed.net._addresses import PortTable
from seedbed.net._fabric import Fabric

SERVED_FAMILIES = (socket.AF_INET, socket.AF_INET6)
SERVED_KINDS = (socket.SOCK_STREAM, socket.SOCK_DGRAM)
V4_MAPPED = "::ffff:"  # how a dual-stack IPv6 socket names an IPv4 peer


class Claim:
    """A port a bound socket holds (the owner recorded in the port table)."""

    __slots__ = ("family", "finalizer", "kind", "name", "node", "port")

    def __init__(self, node: str, kind: int, family: int, port: int, host: str) -> None:
        self.node = node
        self.kind = kind
        self.family = family
        self.port = port
        six = family == socket.AF_INET6
        self.name: tuple[Any, ...] = (host, port, 0, 0) if six else (host, port)
        self.finalizer: weakref.finalize[Any, Any] | None = None

    def __repr__(self) -> str:
        return f"<bound socket {self.node} {self.name}>"


def served(sock: Any) -> bool:
    """Whether the simulated network can serve this kind of socket's bind."""
    return getattr(sock, "family", None) in SERVED_FAMILIES and sock.type in SERVED_KINDS


def unmapped(host: Any) -> Any:
    """`::ffff:10.0.0.2` -> `10.0.0.2`: a dual-stack socket's name for an IPv4 host."""
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, str) and host.startswith(V4_MAPPED):
        return host[len(V4_MAPPED) :]
    return host


class BoundSockets:
    """The claims of one network's bound sockets, by socket (module docstring)."""

    def __init__(self, fabric: Fabric) -> None:
        self._fabric = fabric
        self._claims: dict[int, Claim] = {}  # id(sock): a finalizer drops it with the socket

    def _table(self, kind: int) -> PortTable:
        fabric = self._fabric
        return fabric.stream_ports if kind == socket.SOCK_STREAM else fabric.datagram_ports

    def bind(self, sock: Any, node: str, host: str, port: int) -> None:
        """Take `port` on `node` for `sock` (the caller checked the address is the node's)."""
        if id(sock) in self._claims:
            raise OSError(errno.EINVAL, "Invalid argument")
        claim = Claim(node, sock.type, sock.family, 0, host)
        claim.port = self._table(claim.kind).bind(node, port, claim)
        claim.name = (*claim.name[:1], claim.port, *claim.name[2:])
        key = id(sock)
        self._claims[key] = claim
        claim.finalizer = weakref.finalize(sock, self._drop, key, claim)

    def name(self, sock: Any) -> tuple[Any, ...] | None:
        """What `getsockname` answers for a socket bound here (None: not one)."""
        claim = self._claims.get(id(sock))
        return None if claim is None else claim.name

    def release(self, sock: Any) -> None:
        """The socket closed before any loop method took it: its port is free again."""
        claim = self._claims.get(id(sock))
        if claim is not None:
            self._drop(id(sock), claim)

    def take(self, sock: Any, kind: int) -> Claim | None:
        """Hand a bound socket's port to the endpoint made from it (None: not bound
        here, or another kind). The port is free when this returns: the caller
        binds it again at once, within the same call."""
        claim = self._claims.get(id(sock))
        if claim is None or claim.kind != kind:
            return None
        self._drop(id(sock), claim)
        return claim

    def crashed(self, node: str) -> None:
        """The node's process is gone: so are its sockets' ports."""
        for key, claim in list(self._claims.items()):
            if claim.node == node:
                self._drop(key, claim)

    def _drop(self, key: int, claim: Claim) -> None:
        if self._claims.get(key) is claim:
            del self._claims[key]
            self._table(claim.kind).release(claim.node, claim.port, claim)
        if claim.finalizer is not None:
            claim.finalizer.detach()
        table = self._table(claim.kind)
        require(table.get(claim.node, claim.port) is not claim, "a dropped claim holds no port")
