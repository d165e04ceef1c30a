"""The machine a run sits on: its entropy, process ids and own state, read from the run.

Inside a run each of these read the real machine with no error, and the
trace hash did not change (issue 23). Each is now virtualized or escapes:

==========================  ==========================================  ============
source                      inside a run                                how
==========================  ==========================================  ============
`os.getrandom(n)`           n bytes of the run's entropy                patch
                            ("os.getrandom")
`os.getpid()`               a fake pid, stable per node name (the       patch
                            process outside any node has its own)
`os.getppid()`              1: every simulated process is a child of    patch
                            its machine's init
`ssl.RAND_bytes(n)`         n bytes of the run's entropy                patch
                            ("ssl.RAND_bytes")
SQLite's `date`, `time`,    'now' (and no time value, which means       patch
`datetime`, `julianday`,    'now') is the virtual wall clock of the     (connect)
`strftime`, `unixepoch`,    code now running, in UTC
`timediff`
`resource.getrusage()`      `SimulationEscape`                          patch
reading `/proc/self`,       `SimulationEscape` (the machine's live      audit
`/proc/thread-self`,        state, or its entropy)                      (open,
`/proc/<real pid>`,                                                     listdir,
`/dev/urandom`,                                                         scandir)
`/dev/random`
`ctypes`: loading a         `SimulationEscape` (foreign code reads      audit
library, looking up a       whatever it likes)
function in one
==========================  ==========================================  ============

Out of reach (docs/reference/interposition.md lists them, and why): SQLite's
`CURRENT_TIMESTAMP`, `CURRENT_DATE` and `CURRENT_TIME` (keywords, not
functions: no Python hook sees them); a ctypes function looked up before the
run and called inside it (calls are not audited, only look-ups); OpenSSL's
own randomness in handshakes; `/proc` reached through a file descriptor or
a path that does not spell it (a symlink).

The SQLite functions are replaced on every connection `sqlite3.connect`
opens during a run (the `sqlite3.connect/handle` audit event comes before
the connection can take functions, so `connect` is patched): SQLite lets an
application function override a built-in one of the same name. The
replacement turns 'now' into the virtual time and asks the built-in of a
private connection for the answer, so every modifier keeps SQLite's meaning.
After the run such a connection reads the real clock again; a connection
opened before the run reads it throughout (out of reach too).
"""

from __future__ import annotations

import _thread
import datetime as _dt
import hashlib
import os
from collections.abc import Callable
from typing import Any

from seedbed.aio import _escapes, _providers
from seedbed.aio._host import InterposeHost

_host: InterposeHost | None = None
_owner = 0
_get_ident = _thread.get_ident

_real_getrandom: Callable[..., bytes] | None = getattr(os, "getrandom", None)
_real_getpid = os.getpid
_real_getppid = os.getppid
_PARENT_PID = 1
_EPOCH = _dt.datetime(1970, 1, 1)  # the real class: the stand-in is another


def bind(host: InterposeHost | None, owner: int) -> None:
    """Point the stand-ins at `host` (None: no run is active)."""
    global _host, _owner
    _host, _owner = host, owner


def _run_host() -> InterposeHost | None:
    h = _host
    if h is None or _get_ident() != _owner:
        return None
    return h


# -- virtualized -----------------------------------------------------------------


def fake_pid(node: str) -> int:
    """A process id for `node` ("" outside any node): the same in every run and process."""
    digest = hashlib.blake2b(node.encode("utf-8", "backslashreplace"), digest_size=4).digest()
    return 100 + int.from_bytes(digest, "big") % 32_000  # clear of init and the kernel's


def _getpid() -> int:
    h = _run_host()
    return _real_getpid() if h is None else fake_pid(h.node_name())


def _getppid() -> int:
    return _real_getppid() if _run_host() is None else _PARENT_PID


def _getrandom(size: int, flags: int = 0) -> bytes:
    h = _run_host()
    if h is None:
        assert _real_getrandom is not None  # only installed where the OS has it
        return _real_getrandom(size, flags)
    if size < 0:
        raise ValueError("negative argument not allowed")
    return h.urandom(size, "os.getrandom")


def _rand_bytes(real: Callable[[int], bytes]) -> Callable[[int], bytes]:
    def rand_bytes(n: int) -> bytes:
        h = _run_host()
        if h is None:
            return real(n)
        if n < 0:
            raise ValueError("num must be positive")
        return h.urandom(n, "ssl.RAND_bytes")

    rand_bytes.__name__ = rand_bytes.__qualname__ = "RAND_bytes"
    return rand_bytes


# -- SQLite: 'now' is the virtual wall clock ---------------------------------------

# name -> index of its first time value; timediff has two, unixepoch (3.38+)
# and timediff (3.43+) exist only on newer SQLite, where they are overridden.
_SQL_TIME_FUNCTIONS = {
    "date": 0, "time": 0, "datetime": 0, "julianday": 0, "unixepoch": 0, "strftime": 1,
    "timediff": 0,
}  # fmt: skip
_aux: Any = None  # a private connection whose built-ins do the real work


def _virtual_now() -> str | None:
    """The virtual wall clock as SQLite's time value, or None outside a run."""
    h = _run_host()
    if h is None:
        return None
    stamp = _EPOCH + _dt.timedelta(microseconds=h.wall_ns() // 1000)
    return stamp.isoformat(sep=" ", timespec="milliseconds")


def _sql_function(name: str, first: int) -> Callable[..., Any]:
    def function(*args: Any) -> Any:
        now = _virtual_now()
        if now is not None:
            if len(args) == first:  # no time value: SQLite reads 'now'
                args = (*args, now)
            args = tuple(
                now if i >= first and isinstance(a, str) and a.lower() == "now" else a
                for i, a in enumerate(args)
            )
        marks = ", ".join("?" * len(args))
        return _aux.execute(f"SELECT {name}({marks})", args).fetchone()[0]

    return function


def _connecting(real: Callable[..., Any]) -> Callable[..., Any]:
    """`sqlite3.connect`: inside a run, the connection's date and time read the run."""

    def connect(*args: Any, **kwargs: Any) -> Any:
        connection = real(*args, **kwargs)
        if _run_host() is not None:
            for name in _aux_functions(real):
                function = _sql_function(name, _SQL_TIME_FUNCTIONS[name])
                connection.create_function(name, -1, function)
        return connection

    connect.__name__ = connect.__qualname__ = "connect"
    connect.__doc__ = real.__doc__
    return connect


_available: list[str] = []  # the time functions this SQLite has, in table order


def _aux_functions(real_connect: Callable[..., Any]) -> list[str]:
    """Open the private connection once; the time functions its SQLite offers."""
    global _aux
    if _aux is None:
        _aux = real_connect(":memory:", check_same_thread=False)
        try:
            rows = _aux.execute("SELECT DISTINCT name FROM pragma_function_list").fetchall()
            have = {row[0] for row in rows}
        except Exception:  # an SQLite without the pragma (before 3.30): the core five
            have = {"date", "time", "datetime", "julianday", "strftime"}
        _available[:] = [name for name in _SQL_TIME_FUNCTIONS if name in have]
    return _available


# -- detected -----------------------------------------------------------------------

_PROC = (
    "it reads the real machine's live state or entropy, which differs from run to run; "
    "pass what the program needs in explicitly (or read os.getpid(), which is simulated)"
)
_CTYPES = (
    "foreign code reads the real machine (clocks, entropy, files) out of the simulation's "
    "sight; keep ctypes out of simulated code, or fake the library for the run"
)
_RUSAGE = (
    "resource usage is the real process's, different in every run; measure virtual time "
    "(loop.time(), time.monotonic()) instead"
)


def _machine_path(path: object) -> bool:
    """Does `path` name the real machine's live state (`/proc/self`...) or entropy?"""
    if isinstance(path, bytes):
        path = path.decode("utf-8", "surrogateescape")
    if isinstance(path, os.PathLike) and type(path).__module__.startswith("pathlib"):
        path = os.fspath(path)  # pathlib's own code; another PathLike's fspath is not run
    if not isinstance(path, str):  # a descriptor, or some other PathLike
        return False
    if path in ("/dev/urandom", "/dev/random"):
        return True
    if not path.startswith("/proc/"):
        return False
    head = path[6:].split("/", 1)[0]
    return head in ("self", "thread-self") or head == str(_real_getpid())


def _on_path(call: str) -> Callable[[tuple[Any, ...]], tuple[str, str] | None]:
    def check(args: tuple[Any, ...]) -> tuple[str, str] | None:
        if args and _machine_path(args[0]):
            return f"{call}({args[0]!r})", _PROC
        return None

    return check


def _on_dlopen(args: tuple[Any, ...]) -> tuple[str, str] | None:
    if args and args[0] is not None:  # None: the interpreter itself (`import ctypes`)
        return f"ctypes.CDLL({args[0]!r})", _CTYPES
    return None


def _on_dlsym(args: tuple[Any, ...]) -> tuple[str, str] | None:
    name = args[1] if len(args) > 1 else "?"
    return f"ctypes: looking up {name!r} in a library", _CTYPES


for _event, _check in (
    ("open", _on_path("open")),
    ("os.listdir", _on_path("os.listdir")),
    ("os.scandir", _on_path("os.scandir")),
    ("ctypes.dlopen", _on_dlopen),
    ("ctypes.dlsym", _on_dlsym),
):
    _escapes.add_audit_check(_event, _check)


def patched_functions() -> list[tuple[object, object]]:
    """(original, stand-in) pairs, rebound wherever module globals or holders keep them."""
    import resource

    pairs: list[tuple[object, object]] = [
        (_real_getpid, _getpid),
        (_real_getppid, _getppid),
        (
            resource.getrusage,
            _escapes._escaping(resource.getrusage, "resource.getrusage()", _RUSAGE),
        ),
    ]
    if _real_getrandom is not None:
        pairs.append((_real_getrandom, _getrandom))
    try:
        import _ssl  # loads OpenSSL: done at the first run, not at import
    except ImportError:  # an interpreter built without ssl
        return pairs + _sqlite_pairs()
    pairs.append((_ssl.RAND_bytes, _rand_bytes(_ssl.RAND_bytes)))
    return pairs + _sqlite_pairs()


def _sqlite_pairs() -> list[tuple[object, object]]:
    try:
        import _sqlite3  # loaded at the first run, so `import sqlite3` in a run copies ours
    except ImportError:
        return []
    return [(_sqlite3.connect, _connecting(_sqlite3.connect))]


_providers.register(__name__, patched_functions, bind=bind)
