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
rebound too, and copies held elsewhere (closures, defaults, classes,
partials, dataclass fields) are found through the garbage collector by
`_holders`. Everything is restored by `deactivate()`. A module first
imported during a run keeps the stand-ins it copied, so every stand-in falls
back to the real function whenever no run is active, or when called from a
thread other than the run's (other threads of the process keep the real world).

The scan never runs the code of what it scans: anything may sit in
`sys.modules` (a cffi `Lib` that raises on every attribute, a lazy module
that would load, a proxy), so a module's globals are read through
`ModuleType`'s own descriptor, never hashed or compared, and non-modules are
left to the garbage-collector search. Activation is all or nothing: the scan
cache is committed only once every module was scanned, and any error restores
everything and fails as `SimulatorBug` naming the module.

Which modules supply stand-ins (and so keep originals on purpose, never
rebound) is declared by each of them in `_providers`: this module is one.

Which escapes each CPython version detects, and how: the table in `_escapes`.

The machine's own sources (`os.getrandom`, `getpid`, `/proc/self`, SQLite's
'now', `ctypes`...): `_machine`. `asyncio.Task` itself: `_taskclass`.

Not interposed (cannot be from Python): clocks read by C code (lock, select
and `queue` timeouts, OpenSSL), `hash()` randomization, copies out of
`_holders`' reach (listed there). Pickling a real `datetime`
during a run fails (pickle finds the stand-in class under `datetime.datetime`).
"""

from __future__ import annotations

import os
import random
import sys
import time
import types
import uuid
from collections.abc import Callable
from typing import Any

# _hostname, _load, _machine, _ordering, _signals, _taskclass and _timefuncs are
# imported so that they register as providers.
from seedbed.aio import (  # noqa: F401
    _escapes,
    _holders,
    _hostname,
    _load,
    _machine,
    _ordering,
    _providers,
    _signals,
    _taskclass,
    _timefuncs,
)
from seedbed.aio._host import InterposeHost
from seedbed.aio._timefuncs import _Date, _Datetime, _RealDate, _RealDatetime
from seedbed.errors import SimulatorBug, UsageError

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


# -- the run's host, for the stand-ins below -----------------------------------


def _run_host() -> InterposeHost | None:
    """The host if the caller is the run's thread of an active run, else None."""
    h = _host
    if h is None or _get_ident() != _owner:
        return None
    return h


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
# their ids stay valid. Built on first activation, from every provider's pairs
# (`_providers`), and again whenever a provider is registered or withdrawn.
_replacements: dict[int, tuple[object, object]] = {}
_built_for = -1  # the `_providers.generation()` _replacements was built for
# A stand-in chosen by where the copy lives, for a clearer entropy label.
_SPECIFIC: dict[tuple[str, str], object] = {("random", "_urandom"): _sysrandom_urandom}
# The providers' modules hold originals on purpose: never scanned.
_skip: frozenset[str] = frozenset()


def _own_pairs() -> list[tuple[object, object]]:
    return [
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
    ]


_providers.register(__name__, _own_pairs)


def _build_replacements() -> None:
    """Every provider's pairs; everything cached about the old set is dropped."""
    global _built_for, _skip
    _replacements.clear()
    _seen.clear()
    _seen_keys.clear()
    _seen_values.clear()
    _hits.clear()
    _hit_order.clear()
    _forget_plan()
    _holders.forget()
    providers = _providers.providers()
    for provider in providers:
        for original, fake in provider.pairs():
            _replacements[id(original)] = (original, fake)
    _skip = _providers.spared_modules()
    _built_for = _providers.generation()


# Scan cache: module name -> (the module, its type when scanned). A module
# replaced under the same name, or a lazy module that has since loaded (its
# class changes), is scanned again. Modules are compared by identity only:
# anything in sys.modules may raise on hashing, equality or attribute access.
_seen: dict[str, tuple[object, type]] = {}
_seen_keys: list[str] = []
_seen_values: list[object] = []
# module name -> its globals and the names in them that held an original.
_hits: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {}
_hit_order: list[str] = []
# Read a module's namespace without running its (or a proxy's) attribute
# lookup: a lazy module would load, a cffi `Lib` raises for unknown names.
_module_dict: Callable[[object], object] = vars(types.ModuleType)["__dict__"].__get__


class _ScanError(Exception):
    """Interposition failed while handling one module; names it for SimulatorBug."""

    def __init__(self, module: str, cause: BaseException) -> None:
        super().__init__(module)
        self.module = module
        self.cause = cause


def _namespace(module: object) -> dict[str, Any] | None:
    """A module's globals, or None for anything that is not a module.

    Objects of other kinds in sys.modules are left to the holder scan, which
    finds copies through the garbage collector without touching attributes.
    """
    if not issubclass(type(module), types.ModuleType):
        return None
    namespace = _module_dict(module)
    return namespace if type(namespace) is dict else None


def _scan_module(name: str, module: object) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """(globals, names holding an original) of one module, None if it holds none."""
    namespace = _namespace(module)
    if name in _skip or namespace is None:
        return None
    # A copy: another thread may be importing into this module right now.
    items = namespace.copy().items()
    found = tuple(sorted(k for k, v in items if type(k) is str and id(v) in _replacements))
    return (namespace, found) if found else None


def _same_modules(keys: list[str], values: list[object]) -> bool:
    """Is sys.modules as last scanned? Lists compare by identity first, in C.

    A module replaced by a different object makes `==` call that object's
    `__eq__`, which may raise: that, too, means "changed".
    """
    try:
        return keys == _seen_keys and values == _seen_values
    except Exception:
        return False


def _unchanged(name: str, entry: tuple[object, type]) -> bool:
    old = _seen.get(name)
    return old is not None and old[0] is entry[0] and old[1] is entry[1]


def _scan_new_modules() -> bool:
    """Scan the modules imported (or replaced) since the last scan; False if none.

    All or nothing: the cache is updated only after every new module was
    scanned, so a failure leaves the next activation to scan them again.
    """
    # Fast path (most activations of a sweep): sys.modules is unchanged.
    keys, values = list(sys.modules), list[object](sys.modules.values())
    if _same_modules(keys, values):
        return False
    current = dict(zip(keys, values, strict=True))
    seen = {name: (module, type(module)) for name, module in current.items()}
    hits = {n: hit for n, hit in _hits.items() if _namespace(current.get(n)) is hit[0]}
    for name in sorted(n for n, entry in seen.items() if not _unchanged(n, entry)):
        try:
            hit = _scan_module(name, current[name])
        except Exception as exc:
            raise _ScanError(name, exc) from exc
        if hit is None:
            hits.pop(name, None)
        else:
            hits[name] = hit
    _hits.clear()
    _hits.update(hits)
    _hit_order[:] = sorted(hits)
    _forget_plan()
    _seen.clear()
    _seen.update(seen)
    _seen_keys[:], _seen_values[:] = keys, values
    return True


# What activate() changed, in order: (module, namespace, name, original, stand-in).
Rebinding = tuple[str, dict[str, Any], str, object, object]
_applied: list[Rebinding] = []
_saved_random_state: tuple[Any, ...] | None = None
# The random module's state as the run seeded it, and whether a run moved it
# since `forget_random_use` (a run may activate more than once: its main, then
# its shutdown): a search that enumerates schedules only must know whether the
# program also drew data from `random` (`random_was_used`).
_seeded_random_state: tuple[Any, ...] | None = None
_random_used = False
# What the last scan found, as the rebindings to make (built once per scan, so
# an activation makes no tuple and looks up no replacement per name).
_plan: list[Rebinding] = []
_planned = False  # False: the hits changed since the plan was made


def _forget_plan() -> None:
    global _planned
    _planned = False


def _make_plan() -> None:
    global _planned
    _plan.clear()
    for modname in _hit_order:
        namespace, names = _hits[modname]
        for attr in names:
            original = namespace.get(attr)
            entry = _replacements.get(id(original))
            if entry is not None and entry[0] is original:
                fake = _SPECIFIC.get((modname, attr), entry[1])
                _plan.append((modname, namespace, attr, original, fake))
    _planned = True


def _rebind_copies() -> None:
    modname = ""
    try:
        if not _planned:
            _make_plan()
        get = _replacements.get
        for planned in _plan:
            modname, namespace, attr, original, fake = planned
            current = namespace.get(attr)
            if current is not original:  # rebound since the scan: to another original?
                entry = get(id(current))
                if entry is None or entry[0] is not current:
                    continue
                planned = (modname, namespace, attr, current, entry[1])
                fake = entry[1]
            namespace[attr] = fake
            _applied.append(planned)
    except Exception as exc:
        raise _ScanError(modname, exc) from exc


def _restore_copies() -> None:
    while _applied:
        _, namespace, attr, original, fake = _applied.pop()
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
    global _saved_random_state, _seeded_random_state, _uuid_last, _uuid_node
    if _host is not None:
        raise UsageError("a simulated run is already active in this process; runs do not nest")
    _escapes.install_audit_hook()
    if _built_for != _providers.generation():
        _build_replacements()  # the first run, or a provider came or went
    search = _holders.changed(_replacements)  # before anything moves a reference
    try:
        search |= _scan_new_modules()
        _saved_random_state = random.getstate()
        random.seed(host.seed_for("random module seed"))
        _seeded_random_state = random.getstate()
        _uuid_last, _uuid_node = 0, None
        random.Random.seed = _seed  # type: ignore[method-assign]
        _rebind_copies()
        _rebind_holders(search)
        _go_live(host)
    except _ScanError as exc:
        deactivate()
        raise SimulatorBug(
            f"seedbed failed to interpose on module {exc.module!r} "
            f"({type(exc.cause).__name__}: {exc.cause}); nothing was changed. "
            "Please report this with the module's name"
        ) from exc.cause
    except BaseException:
        deactivate()
        raise


def _rebind_holders(search: bool) -> None:
    """Copies in closures, defaults, classes, partials... (see `_holders`)."""
    try:
        _holders.rebind(_replacements, _excluded() if search else [], search)
    except Exception as exc:
        raise _ScanError("(closures, defaults and classes)", exc) from exc


def _excluded() -> list[object]:
    """What holds originals on purpose: never rebound, left out of the search."""
    excluded: list[object] = [*_applied]
    for provider in _providers.providers():  # each keeps its originals on purpose
        excluded += provider.keeps
    for name in sorted(_providers.spared_modules()):
        excluded.append(_namespace(sys.modules.get(name)) or {})
    # datetime's classes are left to the module scan: what gets copied is a
    # bound method (datetime.now), which is out of reach anyway.
    excluded += [_RealDatetime, _RealDate]
    excluded += [cls.__mro__ for cls, _ in _replacements.values() if isinstance(cls, type)]
    for _, fake in _replacements.values():
        excluded.extend(getattr(fake, "__closure__", None) or ())  # a stand-in's own `real`
    excluded.extend(_replacements.values())
    return excluded


def _go_live(host: InterposeHost | None) -> None:
    global _host, _owner
    owner = _get_ident() if host is not None else 0
    _host, _owner = host, owner
    for provider in _providers.providers():
        if provider.bind is not None:
            provider.bind(host, owner)


def forget_random_use() -> None:
    """Start counting afresh for `random_was_used` (before a run)."""
    global _random_used
    _random_used = False


def random_was_used() -> bool:
    """Whether runs since `forget_random_use` drew from the `random` module's functions."""
    return _random_used


def deactivate() -> None:
    """Stop interposing and restore everything activate() changed.

    Safe in `finally` and idempotent: a second call does nothing.
    """
    global _saved_random_state, _seeded_random_state, _random_used
    _go_live(None)
    _holders.restore(_replacements)
    _restore_copies()
    if random.Random.__dict__.get("seed") is _seed:
        random.Random.seed = _real_seed  # type: ignore[method-assign]
    if _seeded_random_state is not None:
        _random_used = _random_used or random.getstate() != _seeded_random_state
        _seeded_random_state = None
    if _saved_random_state is not None:
        random.setstate(_saved_random_state)
        _saved_random_state = None
    _holders.remember(_replacements)
