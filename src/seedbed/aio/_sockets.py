"""A real socket's `bind`, `getsockname` and `close` inside a run: offered to the loop's network.

aiohttp's test server (and code like it) binds a real `socket.socket` to
`127.0.0.1:0`, reads the port the kernel chose with `getsockname()`, and
hands the socket to `loop.create_server(sock=...)`. A real bind would take a
port the kernel picks (a number no seed decides) and is refused as an
escape; inside a run these two methods first ask the loop's network, which
serves TCP and UDP binds on the simulated network (on loopback in a plain
loop, on a node's own addresses in a world: `seedbed.net._bound`), answers
their address, and frees the port when the socket is closed. Anything it does
not serve (another address, another kind of socket) runs the real method,
whose audit event still reports the escape. A served socket is never bound for real, so it
must not `listen()` for real either (the kernel would bind it to a port of
its choosing): that is an escape too.

Outside a run, and on other threads (the running loop of this thread is not
a `SeedbedLoop`), the originals run. `install()` and `restore()` bracket each
stretch of running, as `_blocking`'s stand-ins do.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

_REAL_BIND = socket.socket.bind
_REAL_GETSOCKNAME = socket.socket.getsockname
_REAL_LISTEN = socket.socket.listen
_REAL_CLOSE = socket.socket.close  # Python code of socket.socket itself (not inherited)
_LISTEN = (
    "a socket bound on the simulated loopback cannot listen for real; hand it to "
    "loop.create_server(sock=...) (as aiohttp's TestServer does), or use asyncio.start_server"
)


def _loop() -> Any:
    from seedbed.aio.loop import SeedbedLoop  # the loop imports this module

    loop = asyncio.events._get_running_loop()
    return loop if isinstance(loop, SeedbedLoop) else None


def _bind(self: socket.socket, address: Any) -> None:
    loop = _loop()
    if loop is not None and loop.bind_socket(self, address):
        return
    _REAL_BIND(self, address)


def _getsockname(self: socket.socket) -> Any:
    loop = _loop()
    if loop is not None:
        name = loop.socket_name(self)
        if name is not None:
            return name
    return _REAL_GETSOCKNAME(self)


def _listen(self: socket.socket, *backlog: int) -> None:
    loop = _loop()
    if loop is not None and loop.socket_name(self) is not None:
        # Unbound for real, a listen would bind a port the kernel picks.
        raise loop.escape("socket.listen()", _LISTEN)
    _REAL_LISTEN(self, *backlog)


def _close(self: socket.socket) -> None:
    loop = _loop()
    if loop is not None:
        loop.release_socket(self)  # a port the network served is free again, as at a real close
    _REAL_CLOSE(self)


def install() -> None:
    """Put the stand-ins on `socket.socket` (a stretch of running begins)."""
    socket.socket.bind = _bind  # type: ignore[method-assign, assignment]
    socket.socket.getsockname = _getsockname  # type: ignore[method-assign, assignment]
    socket.socket.listen = _listen  # type: ignore[method-assign, assignment]
    socket.socket.close = _close  # type: ignore[method-assign, assignment]


def restore() -> None:
    """Let `socket.socket` inherit the C methods again; safe to repeat."""
    for name in ("bind", "getsockname", "listen"):
        if name in vars(socket.socket):
            delattr(socket.socket, name)
    socket.socket.close = _REAL_CLOSE  # type: ignore[method-assign]
