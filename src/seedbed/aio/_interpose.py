"""Interposition: inside a simulated run, clocks and entropy read the simulation.

While a run is active (between `activate(host)` and `deactivate()`), code on
the run's thread sees the run's virtual clocks and entropy instead of the
machine's (DESIGN.md §2, rule 3):

- `time.time/time_ns/monotonic/monotonic_ns/perf_counter/perf_counter_ns`
  read `host.wall_ns()` / `host.monotonic_ns()`;
- `datetime.datetime.now/utcnow/today` and `datetime.date.today` read the
  virtual wall clock (the classes are replaced by look-alike subclasses:
  their methods are C code and cannot be patched);
- the `random` module's functions are reseeded from the run, unseeded
  `random.Random()` and `.seed()` draw their seed from it, and `os.urandom`,
  `random.SystemRandom` (hence `secrets`), `uuid.uuid4` and `uuid.uuid1` draw
  from `host.urandom`;
- reaching for the real world raises `SimulationEscape` (see `_escapes`).

Patching the attribute of `time` is not enough: `from time import monotonic`
in `queue`, `threading` (`_time`), `subprocess` or user code holds its own
reference. So every module's globals are scanned (in sorted module-name
order, each module once, cached) for references identical to an original and
rebound too. Everything is restored by `deactivate()`. A module first
imported during a run keeps the stand-ins it copied, so every stand-in falls
back to the real function whenever no run is active, or when called from a
thread other than the run's (other threads of the process keep the real world).

Which escapes each CPython version detects, and how: the table in `_escapes`.

Not interposed (cannot be from Python): clocks read by C code (lock, select
and `queue` timeouts, OpenSSL), `hash()` randomization, `os.getrandom`,
default arguments captured at definition time (`sched.scheduler(timefunc=)`).
Pickling a real `datetime` during a run fails (pickle finds the stand-in
class under `datetime.datetime`).
"""

from __future__ import annotations

import datetime as _dt
import os
import random
import sys
import time
import types
import uuid
from typing import Any, Self

from seedbed.aio import _escapes, _ordering
from seedbed.aio._host import InterposeHost
from seedbed.errors import UsageError

_get_ident = _escapes._get_ident  # _thread.get_ident: the run's thread check

# The run being served (None: no run) and the thread it runs on.
_host: InterposeHost | None = None
_owner = 0

_real_time = time.time
_real_time_ns = time.time_ns
_real_monotonic = time.monotonic
_real_monotonic_ns = time.monotonic_ns
_real_perf_counter = time.perf_counter
_real_perf_counter_ns = time.perf_counter_ns
_real_urandom = os.urandom
_real_uuid1 = uuid.uuid1
_real_uuid4 = uuid.uuid4
_real_seed = random.Random.seed
_RealDatetime = _dt.datetime
_RealDate = _dt.date


# -- clocks: one global lookup and a call when no run is active ----------------


def _time() -> float:
    h = _host
    if h is None or _get_ident() != _owner:
        return _real_time()
    return h.wall_ns() / 1e9


def _time_ns() -> int:
    h = _host
    if h is None or _get_ident() != _owner:
        return _real_time_ns()
    return h.wall_ns()


def _monotonic() -> float:
    h = _host
    if h is None or _get_ident() != _owner:
        return _real_monotonic()
    return h.monotonic_ns() / 1e9


def _monotonic_ns() -> int:
    h = _host
    if h is None or _get_ident() != _owner:
        return _real_monotonic_ns()
    return h.monotonic_ns()


def _perf_counter() -> float:
    h = _host
    if h is None or _get_ident() != _owner:
        return _real_perf_counter()
    return h.monotonic_ns() / 1e9


def _perf_counter_ns() -> int:
    h = _host
    if h is None or _get_ident() != _owner:
        return _real_perf_counter_ns()
    return h.monotonic_ns()


# -- datetime: C methods cannot be patched, so the classes are replaced --------


def _run_host() -> InterposeHost | None:
    """The host if the caller is the run's thread of an active run, else None."""
    h = _host
    if h is None or _get_ident() != _owner:
        return None
    return h


class _LooksReal(type):
    """Metaclass making the stand-in classes accept instances of the real ones.

    Code holding the stand-in (`from datetime import datetime`) still gets
    True from `isinstance(x, datetime)` for a real datetime made by C code.
    """

    _real: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._real)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._real)


class _Datetime(_RealDatetime, metaclass=_LooksReal):
    _real = _RealDatetime

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> Self:
        h = _run_host()
        if h is None:
            return super().now(tz)
        seconds, ns = divmod(h.wall_ns(), 1_000_000_000)
        return cls.fromtimestamp(seconds, tz).replace(microsecond=ns // 1000)

    @classmethod
    def utcnow(cls) -> Self:
        if _run_host() is None:
            return super().utcnow()
        return cls.now(_dt.UTC).replace(tzinfo=None)

    @classmethod
    def today(cls) -> Self:
        return cls.now()

    def __repr__(self) -> str:
        # The base repr uses the type's bare name, "datetime(...)".
        return "datetime." + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickle under whichever class `datetime.datetime` names right now, so
        # values made in a run still pickle after it.
        reduced = super().__reduce_ex__(protocol)
        return (_dt.datetime, *reduced[1:])


class _Date(_RealDate, metaclass=_LooksReal):
    _real = _RealDate

    @classmethod
    def today(cls) -> Self:
        h = _run_host()
        if h is None:
            return super().today()
        return cls.fromtimestamp(h.wall_ns() // 1_000_000_000)

    def __repr__(self) -> str:
        return "datetime." + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        reduced = super().__reduce_ex__(protocol)
        return (_dt.date, *reduced[1:])


for _cls, _name in ((_Datetime, "datetime"), (_Date, "date")):
    _cls.__name__ = _cls.__qualname__ = _name
    _cls.__module__ = "datetime"


# -- entropy -------------------------------------------------------------------


def _urandom(size: int) -> bytes:
    h = _run_host()
    if h is None:
        return _real_urandom(size)
    if size < 0:
        raise ValueError("negative argument not allowed")
    return h.urandom(size, "os.urandom")


def _sysrandom_urandom(size: int) -> bytes:
    """`random._urandom`: what SystemRandom, and so `secrets`, draw from."""
    h = _run_host()
    if h is None:
        return _real_urandom(size)
    return h.urandom(size, "random.SystemRandom")


def _seed(self: random.Random, a: Any = None, version: int = 2) -> None:
    """`random.Random.seed`: an unseeded generator inside a run is seeded by it."""
    if a is None:
        h = _run_host()
        if h is not None:
            a = h.seed_for("unseeded random.Random")
    _real_seed(self, a, version)


def _uuid4() -> uuid.UUID:
    h = _run_host()
    if h is None:
        return _real_uuid4()
    return uuid.UUID(bytes=h.urandom(16, "uuid.uuid4"), version=4)


# 100 ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
_UUID_EPOCH_OFFSET = 0x01B21DD213814000
_uuid_last = 0  # per run: uuid1 timestamps strictly increase, as CPython's do
_uuid_node: int | None = None  # per run: the simulated machine's "MAC address"


def _uuid1(node: int | None = None, clock_seq: int | None = None) -> uuid.UUID:
    h = _run_host()
    if h is None:
        return _real_uuid1(node, clock_seq)
    global _uuid_last, _uuid_node
    stamp = max(h.wall_ns() // 100 + _UUID_EPOCH_OFFSET, _uuid_last + 1)
    _uuid_last = stamp
    if clock_seq is None:
        clock_seq = int.from_bytes(h.urandom(2, "uuid.uuid1 clock_seq"), "big") & 0x3FFF
    if node is None:
        if _uuid_node is None:
            # A random node has the multicast bit set (RFC 4122 §4.5).
            _uuid_node = int.from_bytes(h.urandom(6, "uuid.uuid1 node"), "big") | (1 << 40)
        node = _uuid_node
    fields = (
        stamp & 0xFFFFFFFF,
        (stamp >> 32) & 0xFFFF,
        (stamp >> 48) & 0x0FFF,
        (clock_seq >> 8) & 0x3F,
        clock_seq & 0xFF,
        node,
    )
    return uuid.UUID(fields=fields, version=1)


# -- finding and rebinding the originals ---------------------------------------

# id(original) -> (original, stand-in); the originals are kept alive here, so
# their ids stay valid. Built on first activation.
_replacements: dict[int, tuple[object, object]] = {}
# A stand-in chosen by where the copy lives, for a clearer entropy label.
_SPECIFIC: dict[tuple[str, str], object] = {("random", "_urandom"): _sysrandom_urandom}
_SKIP = frozenset({__name__, _escapes.__name__})  # they hold the originals on purpose


def _build_replacements() -> None:
    pairs: list[tuple[object, object]] = [
        (_real_time, _time),
        (_real_time_ns, _time_ns),
        (_real_monotonic, _monotonic),
        (_real_monotonic_ns, _monotonic_ns),
        (_real_perf_counter, _perf_counter),
        (_real_perf_counter_ns, _perf_counter_ns),
        (_RealDatetime, _Datetime),
        (_RealDate, _Date),
        (_real_urandom, _urandom),
        (_real_uuid1, _uuid1),
        (_real_uuid4, _uuid4),
        # `random.seed` is a method bound to `random._inst` at import time.
        (random.seed, types.MethodType(_seed, random._inst)),
        *_escapes.patched_escapes(),
        *_ordering.patched_functions(),
    ]
    for original, fake in pairs:
        _replacements[id(original)] = (original, fake)


# Scan cache. `_seen` is the set of (name, module) pairs already scanned, so a
# module replaced under the same name is scanned again; `_hits` maps a module
# name to its globals and the names in them that held an original.
_seen: set[tuple[str, object]] = set()
_seen_keys: list[str] = []
_seen_values: list[object] = []
_hits: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {}
_hit_order: list[str] = []


def _scan_module(name: str, module: object) -> None:
    namespace = _namespace(module)  # None for non-modules and some lazy loaders
    if name in _SKIP or not isinstance(namespace, dict):
        return
    # A copy: another thread may be importing into this module right now.
    found = tuple(sorted(k for k, v in namespace.copy().items() if id(v) in _replacements))
    if found:
        _hits[name] = (namespace, found)
    else:
        _hits.pop(name, None)


def _scan_new_modules() -> None:
    """Scan the modules imported (or replaced) since the last scan."""
    # Fast path (most activations of a sweep): sys.modules is unchanged. List
    # equality compares by identity first, so this is an identity check in C.
    keys, values = list(sys.modules), list(sys.modules.values())
    if keys == _seen_keys and values == _seen_values:
        return
    _seen_keys[:], _seen_values[:] = keys, values
    current = sys.modules.copy()
    try:
        fresh = sorted(current.items() - _seen, key=lambda item: item[0])
    except TypeError:  # an unhashable object in sys.modules: scan all
        fresh = sorted(current.items(), key=lambda item: item[0])
    if not fresh and len(current) == len(_seen):
        return
    for name, module in fresh:
        _scan_module(name, module)
    for name in [n for n, (ns, _) in _hits.items() if _namespace(current.get(n)) is not ns]:
        del _hits[name]  # removed from sys.modules: stop patching a dead module
    _seen.clear()
    _seen.update((k, v) for k, v in current.items() if v.__hash__ is not None)
    _hit_order[:] = sorted(_hits)


def _namespace(module: object) -> object:
    try:
        return vars(module)
    except Exception:
        return None


# What activate() changed, in order: (namespace, name, original, stand-in).
_applied: list[tuple[dict[str, Any], str, object, object]] = []
_saved_random_state: tuple[Any, ...] | None = None


def _rebind_copies() -> None:
    for modname in _hit_order:
        namespace, names = _hits[modname]
        for attr in names:
            current = namespace.get(attr)
            entry = _replacements.get(id(current))
            if entry is None or entry[0] is not current:
                continue  # rebound since the scan
            fake = _SPECIFIC.get((modname, attr), entry[1])
            namespace[attr] = fake
            _applied.append((namespace, attr, current, fake))


def _restore_copies() -> None:
    while _applied:
        namespace, attr, original, fake = _applied.pop()
        if namespace.get(attr) is fake:
            namespace[attr] = original


# -- the API the loop calls ----------------------------------------------------


def active_host() -> InterposeHost | None:
    """The host of the active run, or None when no run is active."""
    return _host


def activate(host: InterposeHost) -> None:
    """Start interposing for a run on the calling thread (see module docstring).

    Draws one seed (`"random module seed"`) from the host. Cheap to repeat:
    only modules imported since the previous activation are scanned.
    Raises UsageError if a run is already active (runs do not nest).
    """
    global _saved_random_state, _uuid_last, _uuid_node
    if _host is not None:
        raise UsageError("a simulated run is already active in this process; runs do not nest")
    _escapes.install_audit_hook()
    if not _replacements:
        _build_replacements()
    try:
        _scan_new_modules()
        _saved_random_state = random.getstate()
        random.seed(host.seed_for("random module seed"))
        _uuid_last, _uuid_node = 0, None
        random.Random.seed = _seed  # type: ignore[method-assign]
        _rebind_copies()
        _go_live(host)
    except BaseException:
        deactivate()
        raise


def _go_live(host: InterposeHost | None) -> None:
    global _host, _owner
    owner = _get_ident() if host is not None else 0
    _host, _owner = host, owner
    _escapes.bind(host, owner)


def deactivate() -> None:
    """Stop interposing and restore everything activate() changed.

    Safe in `finally` and idempotent: a second call does nothing.
    """
    global _saved_random_state
    _go_live(None)
    _restore_copies()
    if random.Random.__dict__.get("seed") is _seed:
        random.Random.seed = _real_seed  # type: ignore[method-assign]
    if _saved_random_state is not None:
        random.setstate(_saved_random_state)
        _saved_random_state = None
