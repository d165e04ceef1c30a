"""Signals: `add_signal_handler` installs its handler, a signal to the process itself is delivered.

Stock asyncio installs a handler for the signal (from the main thread) and
runs the callback on the loop when the signal arrives; seedbed's loop used
to record the callback and install nothing, so a signal went to the
previous handler (a test's own SIGTERM ended the test run). Now:

- `add_signal_handler` checks what stock checks (a valid signal, not
  SIGKILL/SIGSTOP, not a coroutine function, the main thread) and installs a
  real handler that queues the callback on the loop, as stock's does; a
  signal from outside the process (Ctrl-C) arrives as it does on stock.
  `remove_signal_handler` and `close()` restore the default.
- Inside a run the process is the simulated one: `os.kill(os.getpid(), sig)`
  (its fake pid, or the real one), `signal.raise_signal(sig)` and
  `signal.pthread_kill` of the run's thread deliver the signal at once,
  where it was sent, to the handler Python has for it (`signal.getsignal`):
  the loop's queues the callback, a program's own runs, SIG_IGN and signals
  ignored by default (SIGCHLD, SIGURG, SIGWINCH, SIGCONT) do nothing.
- Refused with a `SimulationEscape` naming the call: a signal whose default
  action would end the process (it would end the whole simulation: crash a
  node with `Simulation.crash` instead), a signal to any other process or to
  a process group, and `os.kill(pid, 0)` of another pid (which real processes
  exist is the machine's state).

One table per loop, as on stock: in a world every node's `add_signal_handler`
shares the loop's.
"""

from __future__ import annotations

import _thread
import contextlib
import inspect
import os
import signal
from collections.abc import Callable
from typing import Any

from seedbed.aio import _providers
from seedbed.aio._host import InterposeHost
from seedbed.aio._machine import fake_pid

_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident
_real_kill = os.kill
_real_killpg = os.killpg
_real_raise_signal = signal.raise_signal
_real_pthread_kill = signal.pthread_kill
_real_getpid = os.getpid
_IGNORED_BY_DEFAULT = frozenset(
    getattr(signal, name)
    for name in ("SIGCHLD", "SIGURG", "SIGWINCH", "SIGCONT")
    if hasattr(signal, name)
)
_OTHERS = (
    "a signal to a real process (or a process group) reaches outside the simulation; "
    "signal the simulated process itself (os.getpid()), or crash a node with "
    "Simulation.crash"
)
_ENDS = (
    "with no handler installed its default action ends the process, here the whole "
    "simulation; install one (loop.add_signal_handler, signal.signal) or crash the node "
    "with Simulation.crash"
)


def bind(host: InterposeHost | None, owner: int) -> None:
    """Point the stand-ins at `host` (None: no run is active)."""
    global _host, _owner
    _host, _owner = host, owner


def _run_host() -> InterposeHost | None:
    h = _host
    if h is None or _get_ident() != _owner:
        return None
    return h


def _deliver(h: InterposeHost, call: str, sig: int) -> None:
    """The signal reaches the simulated process now, where it was sent."""
    handler = signal.getsignal(sig)
    if callable(handler):
        handler(sig, None)
    elif handler == signal.SIG_DFL and sig not in _IGNORED_BY_DEFAULT:
        raise h.escape(f"{call} sending {signal.Signals(sig).name} to the simulated process", _ENDS)


def _own(h: InterposeHost, pid: int) -> bool:
    return pid in (fake_pid(h.node_name()), _real_getpid())


def _kill(pid: int, sig: int) -> None:
    h = _run_host()
    if h is None:
        _real_kill(pid, sig)
        return
    if not _own(h, pid):
        raise h.escape(f"os.kill({pid}, {sig})", _OTHERS)
    if sig != 0:  # 0: does it exist? It does.
        _deliver(h, "os.kill()", sig)


def _killpg(pgid: int, sig: int) -> None:
    h = _run_host()
    if h is None:
        _real_killpg(pgid, sig)
        return
    raise h.escape(f"os.killpg({pgid}, {sig})", _OTHERS)


def _raise_signal(sig: int) -> None:
    h = _run_host()
    if h is None:
        _real_raise_signal(sig)
        return
    _deliver(h, "signal.raise_signal()", sig)


def _pthread_kill(thread_id: int, sig: int) -> None:
    h = _run_host()
    if h is None:
        _real_pthread_kill(thread_id, sig)
        return
    if thread_id != _owner:
        raise h.escape(f"signal.pthread_kill({thread_id}, {sig})", _OTHERS)
    if sig != 0:
        _deliver(h, "signal.pthread_kill()", sig)


def _named(stand_in: Callable[..., Any], real: Callable[..., Any]) -> Callable[..., Any]:
    stand_in.__name__ = stand_in.__qualname__ = real.__name__
    stand_in.__doc__ = real.__doc__
    return stand_in


def patched_functions() -> list[tuple[object, object]]:
    """(original, stand-in) pairs, rebound wherever module globals or holders keep them."""
    return [
        (_real_kill, _named(_kill, _real_kill)),
        (_real_killpg, _named(_killpg, _real_killpg)),
        (_real_raise_signal, _named(_raise_signal, _real_raise_signal)),
        (_real_pthread_kill, _named(_pthread_kill, _real_pthread_kill)),
    ]


# -- the loop's side: installing and removing handlers ---------------------------------


def check_signal(sig: int, callback: object) -> None:
    """What stock's `add_signal_handler` refuses, refused the same way."""
    if not isinstance(sig, int) or isinstance(sig, bool):
        raise TypeError(f"sig must be an int, not {sig!r}")
    if sig not in signal.valid_signals():
        raise ValueError(f"invalid signal number {sig}")
    if sig in (signal.SIGKILL, signal.SIGSTOP):
        raise RuntimeError(f"sig {sig} cannot be caught")
    if inspect.iscoroutine(callback) or inspect.iscoroutinefunction(callback):
        raise TypeError("coroutines cannot be used with add_signal_handler()")


def install(sig: int, handler: Callable[[int, Any], None]) -> None:
    """The real handler, as stock installs it (the main thread only)."""
    try:
        signal.signal(sig, handler)
    except ValueError as exc:  # not the main thread: stock says so as a RuntimeError
        raise RuntimeError(str(exc)) from None


def uninstall(sig: int) -> None:
    """Back to the default, as stock's `remove_signal_handler` leaves it."""
    default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
    with contextlib.suppress(ValueError):  # closed from another thread: nothing of ours there
        signal.signal(sig, default)


_providers.register(__name__, patched_functions, bind=bind)
