"""The simulated machine's load: `os.getloadavg()` inside a run.

A real load average is the machine's, changing from second to second with
whatever else runs on it: a library that sizes a pool or backs off by it
would run differently from process to process under one seed, and nothing in
the trace would say so. Inside a run it reads the simulated machine instead,
which runs nothing but the simulation: an idle machine, `(0.0, 0.0, 0.0)`,
the same in every run, process and machine. Outside a run, and on other
threads, the real function answers.
"""

from __future__ import annotations

import _thread
import os
from collections.abc import Callable

from seedbed.aio import _providers
from seedbed.aio._host import InterposeHost

IDLE = (0.0, 0.0, 0.0)  # the simulated machine's 1, 5 and 15 minute load averages

_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident
_real_getloadavg: Callable[[], tuple[float, float, float]] | None = getattr(os, "getloadavg", None)


def bind(host: InterposeHost | None, owner: int) -> None:
    """Point the stand-in at `host` (None: no run is active)."""
    global _host, _owner
    _host, _owner = host, owner


def _getloadavg() -> tuple[float, float, float]:
    if _host is None or _get_ident() != _owner:
        assert _real_getloadavg is not None  # only installed where the OS has it
        return _real_getloadavg()
    return IDLE


def pairs() -> list[tuple[object, object]]:
    """(original, stand-in), for `_interpose` to rebind wherever copies are held."""
    return [] if _real_getloadavg is None else [(_real_getloadavg, _getloadavg)]


_providers.register(__name__, pairs, bind=bind)
