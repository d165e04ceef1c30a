"""Names, addresses and ports of the simulated network.

Every node gets one IPv4 address, `10.0.0.1`, `10.0.0.2`, ... in the order the
network first hears of it (the directory's order, then first use), so
addresses are a function of the program, never of hashing. Node names
resolve like host names; `localhost` and `127.0.0.1` mean the calling node.

Ports are per node and per kind (stream or datagram). `port=0` picks the
next free port from 49152 upward (round robin, as kernels do): deterministic,
and never one that is taken. Name resolution never fails at random: an
unknown name fails at once with `socket.gaierror`, as NXDOMAIN would. An IP
literal that is no node's (`8.8.8.8`) is an address outside the world: it
resolves to itself, connects to it time out and datagrams to it vanish, as
on a host whose network has no route out.

Contracts: names and addresses are one-to-one (an address, once given, is
never given again, and resolves back to its node); a port is bound by at
most one owner at a time, and an ephemeral port is handed out only when free.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from typing import Any

from seedbed._core.contract import broken, require
from seedbed.errors import UsageError

EPHEMERAL_FIRST = 49152
EPHEMERAL_LAST = 65535
LOOPBACK = ("127.0.0.1", "localhost", "::1")
ANY = ("", "0.0.0.0", "::")
_SERVICES = {"http": 80, "https": 443}


class AddressBook:
    """Node name <-> address, and host strings -> node names."""

    __slots__ = ("_by_address", "_by_name")

    def __init__(self, names: list[str], fixed: dict[str, str] | None = None) -> None:
        self._by_name: dict[str, str] = dict(fixed or {})  # a plain loop's one node: 127.0.0.1
        self._by_address: dict[str, str] = {
            address: name for name, address in self._by_name.items()
        }
        for name in names:
            self.address_of(name)

    def address_of(self, name: str) -> str:
        """The node's address, assigned on first use."""
        address = self._by_name.get(name)
        if address is None:
            if not isinstance(name, str) or not name:
                raise UsageError(f"a node name must be a non-empty string, got {name!r}")
            number = len(self._by_name) + 1
            address = f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"
            require(address not in self._by_address, "an address is given once", address=address)
            self._by_name[name] = address
            self._by_address[address] = name
        return address

    def name_at(self, address: str) -> str | None:
        return self._by_address.get(address)

    def node_for(self, host: str | None, caller: str) -> str | None:
        """The node a host string names, seen from `caller`; None if unknown."""
        if host is None or host in LOOPBACK or host in ANY:
            return caller
        if host in self._by_name:
            return host
        node = self._by_address.get(host)
        if node is not None and self._by_name.get(node) != host:
            broken("an address resolves back to the node it was given to", host=host, node=node)
        return node

    def is_outside(self, host: Any) -> bool:
        """An IP literal that no node has (8.8.8.8): reachable by no route here,
        but a well-formed address, so not a name-resolution failure."""
        if not isinstance(host, str) or self._by_address.get(host) is not None:
            return False
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return False
        return host not in LOOPBACK and host not in ANY

    def resolve(self, host: str | None, caller: str) -> str:
        """Like `node_for`, but an unknown host raises `socket.gaierror`."""
        node = self.node_for(host, caller)
        if node is None:
            raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known: {host!r}")
        return node


def port_number(port: Any) -> int:
    """A port given as int, digit string or service name; gaierror otherwise."""
    if port is None:
        return 0
    if isinstance(port, bytes):
        port = port.decode()
    if isinstance(port, str):
        if port.isdigit():
            port = int(port)
        elif port in _SERVICES:
            return _SERVICES[port]
        else:
            raise socket.gaierror(socket.EAI_SERVICE, f"Servname not supported: {port!r}")
    if not isinstance(port, int) or not 0 <= port <= EPHEMERAL_LAST:
        raise OverflowError(f"port must be 0-65535, got {port!r}")
    return port


class PortTable:
    """Which ports are taken on each node, for one kind of socket."""

    __slots__ = ("_cursor", "_taken", "kind")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._taken: dict[tuple[str, int], object] = {}
        self._cursor: dict[str, int] = {}  # where the next ephemeral search starts

    def get(self, node: str, port: int) -> Any:
        return self._taken.get((node, port))

    def bind(self, node: str, port: int, owner: object) -> int:
        """Take `port` (0: the next free ephemeral port) for `owner`."""
        if port == 0:
            port = self._free(node)
        elif (node, port) in self._taken:
            raise OSError(errno.EADDRINUSE, f"{self.kind} port {port} on {node} is in use")
        require(
            (node, port) not in self._taken and 0 < port <= EPHEMERAL_LAST,
            "a port has at most one owner, and a bound port is a real one",
            kind=self.kind, node=node, port=port,
        )  # fmt: skip
        self._taken[(node, port)] = owner
        return port

    def release(self, node: str, port: int, owner: object) -> None:
        if self._taken.get((node, port)) is owner:
            del self._taken[(node, port)]

    def owners_on(self, node: str) -> list[Any]:
        """Everything bound on `node`, in binding order."""
        return [owner for (where, _), owner in self._taken.items() if where == node]

    def _free(self, node: str) -> int:
        """The next free ephemeral port after the last one handed out (wrapping)."""
        span = EPHEMERAL_LAST - EPHEMERAL_FIRST + 1
        start = self._cursor.get(node, 0)
        for step in range(span):
            port = EPHEMERAL_FIRST + (start + step) % span
            if (node, port) not in self._taken:
                self._cursor[node] = (start + step + 1) % span
                return port
        raise OSError(errno.EADDRNOTAVAIL, f"no free {self.kind} port on {node}")
