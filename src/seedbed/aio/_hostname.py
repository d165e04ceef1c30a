"""A node's host name: `socket.gethostname()` and `socket.getfqdn()` inside a run.

A node is a machine of the simulated world, named by its node name: inside
a run `gethostname()` answers it (`localhost` in a run without a world, the
name of its one loopback node), and `getfqdn()` of it, of `""` or of
`0.0.0.0` answers the same, as a host whose name is in its own hosts file
(an SMTP server's banner and `HELO` come from it). Before, `gethostname()`
read the real machine's name (a different value on every machine: a trace
that carries it did not replay elsewhere) and `getfqdn()` was refused as real
name resolution. `getfqdn()` of any other name still resolves for real, and
so is refused by the audit hook (`socket.gethostbyaddr`).

`os.uname().nodename` and `platform.node()` stay the real machine's (fixed
facts of the process, like `os.cpu_count()`).
"""

from __future__ import annotations

import _thread
import socket
from typing import Any

from seedbed.aio import _providers
from seedbed.aio._host import InterposeHost

_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident
_real_gethostname = socket.gethostname
_real_getfqdn = socket.getfqdn
PLAIN_HOST = "localhost"  # a run without a world: its one loopback node's name


def bind(host: InterposeHost | None, owner: int) -> None:
    """Point the stand-ins at `host` (None: no run is active)."""
    global _host, _owner
    _host, _owner = host, owner


def _own_name() -> str | None:
    h = _host
    if h is None or _get_ident() != _owner:
        return None
    return h.node_name() or PLAIN_HOST


def _gethostname() -> str:
    name = _own_name()
    return _real_gethostname() if name is None else name


def _getfqdn(name: Any = "") -> str:
    own = _own_name()
    if own is None:
        return _real_getfqdn(name)
    asked = name.strip() if isinstance(name, str) else name
    if not asked or asked in ("0.0.0.0", own):
        return own
    return _real_getfqdn(name)  # real name resolution: refused inside a run


def patched_functions() -> list[tuple[object, object]]:
    """(original, stand-in) pairs, rebound wherever module globals or holders keep them."""
    _gethostname.__name__ = _gethostname.__qualname__ = "gethostname"
    _getfqdn.__name__ = _getfqdn.__qualname__ = "getfqdn"
    return [(_real_gethostname, _gethostname), (_real_getfqdn, _getfqdn)]


_providers.register(__name__, patched_functions, bind=bind)
