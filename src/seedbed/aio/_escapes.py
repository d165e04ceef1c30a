"""Escape detection: a simulated run that reaches for the real world fails.

A run is a pure function of its seed only while it stays inside the
simulation. A real socket, thread, child process or blocking sleep brings in
timing and state the seed does not decide, so inside a run each of them raises
the `SimulationEscape` that the run's host returns from `host.escape(call,
instead)`, naming the call and what to use instead. The host records the
escape, so the run fails even if user code swallows the exception.

Two mechanisms, chosen per version:

- An audit hook (`sys.addaudithook`) for operations CPython audits. Raising in
  the hook aborts the operation before it touches the world (verified on 3.11,
  3.12 and 3.13 for every event listed in `AUDIT_ESCAPES`). A hook can never be
  removed, so it is installed once per process and returns after one global
  check when no run is active.
- Patched functions for what is not audited on every version: thread start
  (no audit event on 3.11) and `time.sleep` (no audit event before 3.13).

Escapes each CPython version detects, and how (measured on 3.11.7, 3.12.1 and
3.13.0 with a throwaway script; in each case raising aborted the operation):

=========================  =========  =========  ==========================
escape                     3.11       3.12       3.13
=========================  =========  =========  ==========================
socket connect, bind,      audit      audit      audit
sendto; DNS lookups
subprocess.Popen           audit      audit      audit
os.system / fork / exec /  audit      audit      audit
posix_spawn
thread start               patch      patch +    patch + audit
                                      audit      (_start_joinable_thread)
time.sleep (wrapped too)   patch      patch      patch + audit
select/poll/epoll,         patch      patch      patch
signal.alarm/setitimer
socket I/O (send, recv,    patch      patch      patch
accept...) on a real one
=========================  =========  =========  ==========================

Creating a socket is allowed: aiohttp (through aiohappyeyeballs) creates one
and hands it to `loop.sock_connect`, which the simulated network serves
without ever connecting it. Anything that reaches the world through the
socket (connect, bind, sendto) still escapes.

"patch" rebinds `_thread.start_new_thread` (`start_joinable_thread` on 3.13),
`time.sleep`, `select`'s waits and the timer signals wherever `_interpose`
finds a copy (module globals, closures: a wrapper closing over the real
`time.sleep` is caught on 3.11 and 3.12 this way, defaults, classes...), and
sets escaping I/O methods on `socket.socket` and `ssl.SSLSocket` for the run.

Escapes are scoped to the thread that activated the run: other threads of the
process (a Dask worker's comm loop, pytest-timeout) keep the real world.
"""

from __future__ import annotations

import _thread
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from seedbed.aio import _lanesync, _providers, _threadlanes
from seedbed.aio._host import InterposeHost

_SOCKETS = (
    "real sockets escape the simulation; use asyncio.open_connection/start_server "
    "(or loop.create_connection/create_server/create_datagram_endpoint), "
    "which the simulated network serves"
)
_DNS = (
    "real name resolution escapes the simulation; use await loop.getaddrinfo(...) "
    "(asyncio.open_connection resolves through it), which the simulated network answers"
)
_PROCESSES = (
    "a child process runs outside the simulation; model the program as a "
    "simulated node (sim.host) or replace the call with a fake"
)
_THREADS = (
    'a thread started outside threading.Thread, or any thread with threads="inline", '
    "would run outside the simulation's single thread; start a threading.Thread "
    '(a simulated thread with the default threads="lanes") or use asyncio tasks'
)
_SLEEP = (
    "on the event loop's thread it blocks every task in real time; use await "
    "asyncio.sleep(...) (a thread's time.sleep runs on virtual time)"
)
_SELECT = (
    "waiting on real file descriptors blocks the simulation in real time; use asyncio "
    "streams (asyncio.open_connection/start_server), which the simulated network serves, "
    "and await asyncio.sleep(...) to wait"
)
_SIGNALS = (
    "a real timer signal fires in real time, outside the simulation; use "
    "asyncio.timeout(...) or loop.call_later(...), which run on virtual time"
)
_SOCKET_IO = (
    "I/O on a real socket (one opened before the run, or a socketpair) reaches outside "
    "the simulation; open connections inside the run with "
    "asyncio.open_connection/start_server, which the simulated network serves"
)

#: Audit event -> (the call to name, what to use instead). An event a version
#: does not raise simply never fires; the table above says which do.
AUDIT_ESCAPES: dict[str, tuple[str, str]] = {
    "socket.connect": ("socket.connect()", _SOCKETS),
    "socket.bind": ("socket.bind()", _SOCKETS),
    "socket.sendto": ("socket.sendto()", _SOCKETS),
    "socket.sendmsg": ("socket.sendmsg()", _SOCKETS),
    "socket.getaddrinfo": ("socket.getaddrinfo()", _DNS),
    "socket.gethostbyname": ("socket.gethostbyname()", _DNS),
    "socket.gethostbyaddr": ("socket.gethostbyaddr()", _DNS),
    "socket.getnameinfo": ("socket.getnameinfo()", _DNS),
    "subprocess.Popen": ("subprocess.Popen()", _PROCESSES),
    "os.system": ("os.system()", _PROCESSES),
    "os.fork": ("os.fork()", _PROCESSES),
    "os.forkpty": ("os.forkpty()", _PROCESSES),
    "os.exec": ("os.exec*()", _PROCESSES),
    "os.posix_spawn": ("os.posix_spawn()", _PROCESSES),
    "os.spawn": ("os.spawn*()", _PROCESSES),
    "_thread.start_new_thread": ("_thread.start_new_thread()", _THREADS),
    "_thread.start_joinable_thread": ("threading.Thread.start()", _THREADS),
    "time.sleep": ("time.sleep()", _SLEEP),
}

AuditCheck = Callable[[tuple[Any, ...]], tuple[str, str] | None]
#: Audit event -> checks of its arguments, each returning (call, instead) to
#: escape or None to let it be (`_machine` registers its path and ctypes checks
#: here, `seedbed.fs` its checks of writes that bypass a node's disk).
AUDIT_CHECKS: dict[str, list[AuditCheck]] = {}


def add_audit_check(event: str, check: AuditCheck) -> None:
    """Check the arguments of `event` inside runs (after the checks added before)."""
    AUDIT_CHECKS.setdefault(event, []).append(check)


# The run being served and the thread it runs on. `_interpose.activate` sets
# them through `bind`; kept here as plain globals so each check is one lookup.
_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident
_hook_installed = False
# Captured at import, so a later monkeypatch is never mistaken for the original.
_REAL_SLEEP = time.sleep
_REAL_THREAD_STARTS = tuple(
    getattr(_thread, name)
    for name in ("start_new_thread", "start_new", "start_joinable_thread")
    if hasattr(_thread, name)
)


def bind(host: InterposeHost | None, owner: int) -> None:
    """Point the escape checks at `host` (None: no run is active)."""
    global _host, _owner
    _owner = owner
    _host = host
    if host is not None:
        _patch_socket_classes()


def install_audit_hook() -> None:
    """Install the audit hook once per process (hooks cannot be removed)."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)
        _hook_installed = True


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited operation in the process: one global check
    # when no run is active, two lookups for the events that are no escape
    # (`builtins.id` above all) when one is, and no second call for them.
    if _host is None:
        return
    entry = AUDIT_ESCAPES.get(event)
    if entry is None and event not in AUDIT_CHECKS:
        return
    _audit_active(event, args, entry)


def _audit_active(event: str, args: tuple[Any, ...], entry: tuple[str, str] | None) -> None:
    """An event that may be an escape: `entry` from the table, or a check's verdict."""
    host = _host
    if host is None or _get_ident() != _owner:
        return
    if entry is None:
        for check in AUDIT_CHECKS.get(event, ()):
            entry = check(args)
            if entry is not None:
                break
        else:
            return
    raise host.escape(*entry)


def _escaping(real: Callable[..., Any], call: str, instead: str) -> Callable[..., Any]:
    """A stand-in for `real` that raises an escape inside the run, else calls `real`."""

    def fake(*args: Any, **kwargs: Any) -> Any:
        host = _host
        if host is None or _get_ident() != _owner:
            return real(*args, **kwargs)
        raise host.escape(call, instead)

    fake.__name__ = fake.__qualname__ = getattr(real, "__name__", call)
    fake.__doc__ = getattr(real, "__doc__", None)
    return fake


def _sleep(seconds: float) -> None:
    """`time.sleep`: a simulated thread sleeps on virtual time (see `_lanesync`);
    the loop's own code would block every task, so there it escapes."""
    host = _host
    if host is None or _get_ident() != _owner:
        _REAL_SLEEP(seconds)
        return
    lane, lanes = _threadlanes.current(), _threadlanes.active()
    if lane is not None and lanes is not None:
        _lanesync.sleep(lanes, lane, seconds)
        return
    raise host.escape("time.sleep()", _SLEEP)


_sleep.__name__ = _sleep.__qualname__ = "sleep"
_sleep.__doc__ = _REAL_SLEEP.__doc__


# Real I/O on a socket: the methods of `_socket.socket` are C slots that no
# module global holds, so `socket.socket` (and `ssl.SSLSocket`, whose methods
# are its own) get Python methods that escape inside a run and call the real
# ones otherwise. They are installed at the first run and left in place:
# setting and restoring 24 class attributes cost more than the rest of an
# activation, while the wrapper costs one global check per socket call.
_SOCKET_IO_METHODS = (
    "send", "sendall", "recv", "recv_into", "recvfrom", "recvfrom_into", "recvmsg",
    "recvmsg_into", "accept", "sendfile", "read", "write",
)  # fmt: skip
_socket_patched: list[type] = []


def _socket_io(real: Callable[..., Any], name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        host = _host
        if host is None or _get_ident() != _owner:
            return real(self, *args, **kwargs)
        raise host.escape(f"socket.{name}()", _SOCKET_IO)

    method.__name__ = method.__qualname__ = name
    return method


def _patch_socket_classes() -> None:
    """Install the escaping I/O methods once per class (ssl's when it is imported)."""
    classes: list[type] = [socket.socket]
    ssl = sys.modules.get("ssl")
    if ssl is not None and type(vars(ssl).get("SSLSocket")) is type:
        classes.append(vars(ssl)["SSLSocket"])
    for cls in classes:
        if cls in _socket_patched:
            continue
        for name in _SOCKET_IO_METHODS:
            if cls is not socket.socket and name not in vars(cls):
                continue  # inherited from socket.socket, already wrapped
            real = getattr(cls, name, None)
            if real is not None:
                setattr(cls, name, _socket_io(real, name))
        _socket_patched.append(cls)


def patched_escapes() -> list[tuple[object, object]]:
    """(original, stand-in) for every escape caught by patching, not auditing.

    `_interpose` rebinds each original wherever a module's globals hold it:
    `threading._start_new_thread` is a copy of `_thread.start_new_thread`
    (`_start_joinable_thread` on 3.13), `time.sleep` is copied by `sched`,
    `subprocess` and others.
    """
    pairs: list[tuple[object, object]] = [
        (_REAL_SLEEP, _sleep),
        *_selectors_and_timers(),
    ]
    for real in _REAL_THREAD_STARTS:
        if all(real is not old for old, _ in pairs):  # `start_new` may be an alias
            pairs.append((real, _escaping(real, "threading.Thread.start()", _THREADS)))
    return pairs


def _selectors_and_timers() -> list[tuple[object, object]]:
    """`select`'s waits (and `selectors`, built on them) and the real timer signals."""
    pairs: list[tuple[object, object]] = []
    for name in ("select", "poll", "epoll", "devpoll", "kqueue"):
        real = getattr(select, name, None)
        if real is not None:
            pairs.append((real, _escaping(real, f"select.{name}()", _SELECT)))
    for name in ("alarm", "setitimer"):
        real = getattr(signal, name, None)
        if real is not None:
            pairs.append((real, _escaping(real, f"signal.{name}()", _SIGNALS)))
    return pairs


# The thread-start originals sit in a tuple outside the globals: kept too.
_providers.register(__name__, patched_escapes, keeps=(_REAL_THREAD_STARTS,), bind=bind)
