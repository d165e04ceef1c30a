"""Copies of the clock and entropy functions held outside module globals.

`_interpose` rebinds `from time import monotonic` in module globals. A copy
can also sit in a closure cell, a default argument (`def f(clock=time.time)`,
keyword-only too), a class attribute (plain or `staticmethod`), an instance's
attributes, a `functools.partial`, a dataclass field's `default_factory`
(held by the field and by a cell of the generated `__init__`), or a plain
dict. Those holders are found through the garbage collector
(`gc.get_referrers` of the originals) and rebound for the run like module
globals; `restore()` puts every original back.

The search walks the whole heap twice (13-80 ms for 21,000 objects measured
by bench/interpose.py), too slow to repeat before every run of a sweep. So
the holders found are kept, and the heap is searched again only when
something may have changed: the
first time, after an import, or when the reference count of an original
is above what it was at the end of the previous run (a new holder adds a
reference; a count that fell, a holder the garbage collector freed, needs
no search). The count is read at the same point of every activation, so
whether a search happens depends only on what the program did, never on
timing.

Out of reach (named in docs/reference/interposition.md): copies in tuples other than a function's
defaults or a partial's arguments, in lists, sets and frozensets, in objects
of C types (other than `staticmethod`, `classmethod`, `partial` and
`__slots__`), in immutable types, and copies made while a run is active
(those hold the stand-ins, which fall back to the real function outside runs).
"""

from __future__ import annotations

import functools
import gc
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

# id(original) -> (original, stand-in), shared with _interpose.
Replacements = dict[int, tuple[object, object]]

# How to write one place holding a copy, and read it back.
_Slot = tuple[Callable[[object], None], Callable[[], object]]

# Each copy found: how to write its place, read it back, and the original.
_found: list[tuple[Callable[[object], None], Callable[[], object], object]] = []
_fingerprint: list[int] = []
_counted: list[object] = []  # the originals whose reference counts are compared
_applied: list[tuple[Callable[[object], None], Callable[[], object], object, object]] = []
_MISSING = object()
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def changed(replacements: Replacements) -> bool:
    """True if the heap may hold copies not found yet (call before any rebinding).

    Only a count that grew says so: a freed holder (a finished run's frames
    collected late, as a search's bookkeeping makes the collector run at
    other moments) lowers a count and holds nothing left to rebind.
    """
    now = _refcounts(replacements)
    return len(now) != len(_fingerprint) or any(map(int.__gt__, now, _fingerprint))


def rebind(replacements: Replacements, excluded: Iterable[object], search: bool) -> None:
    """Rebind every reachable copy held outside module globals (see module docstring).

    With `search`, walk the heap again; else rebind the holders found last
    time. `excluded` holds objects that keep originals on purpose (seedbed's
    own namespaces and tables): they are never rebound.
    """
    if search:
        _found.clear()  # its tuples would be found as holders
        for holder, key, original in _search(replacements, {id(x) for x in excluded}):
            slot = _slot(holder, key)
            if slot is not None:
                _found.append((*slot, original))
    for put, get, original in _found:
        if get() is original:
            fake = replacements[id(original)][1]
            try:
                put(fake)
            except (AttributeError, TypeError):
                continue  # read-only (an immutable type): out of reach
            _applied.append((put, get, original, fake))


def restore(replacements: Replacements) -> None:
    """Put back every original `rebind` replaced.

    A place that no longer holds the stand-in was changed by the run: left as is.
    """
    while _applied:
        put, get, original, fake = _applied.pop()
        if get() is fake:
            put(original)


def remember(replacements: Replacements) -> None:
    """Note the originals' reference counts, once everything is restored."""
    _fingerprint[:] = _refcounts(replacements)


def forget() -> None:
    """Drop what was found and counted: the set of originals is about to change.

    Called between runs only (nothing is rebound then); the next activation
    searches the heap again.
    """
    _found.clear()
    _fingerprint.clear()
    _counted.clear()


def _refcounts(replacements: Replacements) -> list[int]:
    if not _counted:
        # Classes are left out: every instance made of a heap type references it.
        _counted.extend(o for o, _ in replacements.values() if not isinstance(o, type))
    return list(map(sys.getrefcount, _counted))


# -- searching the heap ---------------------------------------------------------


def _search(replacements: Replacements, excluded: set[int]) -> list[tuple[object, Any, object]]:
    """(holder, key, original) for every copy found; at most two heap walks."""
    originals = [o for o, _ in replacements.values() if id(o) not in excluded]
    direct = [r for r in gc.get_referrers(*originals) if id(r) not in excluded]
    found: list[tuple[object, Any, object]] = []
    containers: list[Any] = []  # tuples and dicts whose owner decides how to rebind
    # Kinds are told by type(), never isinstance(): that would read
    # `__class__`, running the code of whatever object sits in the heap.
    for holder in direct:
        if issubclass(type(holder), tuple | dict):
            containers.append(holder)
        elif not issubclass(type(holder), list | set | frozenset | types.FrameType):
            found.extend(_copies_in_object(holder, replacements))
    if containers:
        found.extend(_copies_in_containers(containers, replacements, excluded))
    del direct, containers
    return found


def _is_original(value: object, replacements: Replacements) -> bool:
    entry = replacements.get(id(value))
    return entry is not None and entry[0] is value


def _copies_in_object(holder: object, replacements: Replacements) -> list[Any]:
    """Copies in a cell, a partial, a static/class method or an object's attributes."""
    kind = type(holder)
    found: list[Any] = []
    if issubclass(kind, types.CellType):
        keys: list[str | int] = ["cell_contents"]
    elif issubclass(kind, functools.partial):
        keys = ["func"]
    elif issubclass(kind, staticmethod | classmethod):
        keys = ["__func__"]
    else:
        keys = [name for name, _ in _member_slots(holder)]
        found = _copies_in_instance_dict(holder, replacements)
    found.extend(
        (holder, key, value)
        for key in keys
        if _is_original(value := _read(holder, key), replacements)
    )
    return found


def _copies_in_instance_dict(holder: object, replacements: Replacements) -> list[Any]:
    """An object's attributes, which 3.13 may keep inline, not in a dict object.

    Read through the class's own `__dict__` descriptor (C code), never the
    object's attribute lookup.
    """
    for klass in type(holder).__mro__:
        descriptor = vars(klass).get("__dict__")
        if type(descriptor) is types.GetSetDescriptorType:
            namespace = descriptor.__get__(holder)
            break
    else:
        return []
    if type(namespace) is not dict:
        return []
    return [
        (namespace, key, value)
        for key, value in list(namespace.items())
        if type(key) is str and _is_original(value, replacements)
    ]


def _copies_in_containers(
    containers: list[Any], replacements: Replacements, excluded: set[int]
) -> list[Any]:
    """Copies in function defaults, partial arguments, class and other dicts."""
    owners: dict[int, list[object]] = {}
    for owner in gc.get_referrers(*containers):
        if issubclass(type(owner), type | types.FunctionType | functools.partial):
            for ref in gc.get_referents(owner):
                owners.setdefault(id(ref), []).append(owner)
    found: list[Any] = []
    for container in containers:
        holders = owners.get(id(container), [])
        if isinstance(container, tuple):  # a class's bases and mro are out of reach
            found.extend(_copies_in_tuple(container, holders, replacements))
            continue
        if not any(isinstance(h, type) for h in holders):
            found.extend(
                (container, key, value)
                for key, value in list(container.items())
                if type(key) is str and _is_original(value, replacements)
            )
        for cls in (h for h in holders if isinstance(h, type) and id(h) not in excluded):
            found.extend(
                (cls, ("class", key), value)
                for key, value in list(container.items())
                if type(key) is str and _is_original(value, replacements)
            )
    return found


def _copies_in_tuple(
    container: tuple[object, ...], holders: list[object], replacements: Replacements
) -> list[Any]:
    found: list[Any] = []
    for holder in holders:
        if isinstance(holder, types.FunctionType) and holder.__defaults__ is container:
            attr = "__defaults__"
        elif isinstance(holder, functools.partial) and holder.args is container:
            attr = "args"
        else:
            continue
        found.extend(
            (holder, (attr, i), value)
            for i, value in enumerate(container)
            if _is_original(value, replacements)
        )
    return found


def _member_slots(holder: object) -> list[tuple[str, Any]]:
    """The `__slots__` descriptors of the holder's class (a dataclass Field has them)."""
    try:
        mro = type(holder).__mro__
    except Exception:
        return []
    return [
        (name, desc)
        for klass in mro
        if klass.__flags__ & _HEAP_TYPE  # C types' members are theirs to manage
        for name, desc in vars(klass).items()
        if isinstance(desc, types.MemberDescriptorType)
    ]


# -- reading and writing one copy ----------------------------------------------


def _read(holder: Any, key: Any) -> object:
    slot = _slot(holder, key)
    return _MISSING if slot is None else slot[1]()


def _slot(holder: Any, key: Any) -> _Slot | None:
    """(set, get) for one place holding a copy; None when it cannot be written."""
    try:
        if isinstance(key, tuple):
            return _indexed_slot(holder, key)
        if isinstance(holder, dict):
            return _dict_slot(holder, key)
        if key == "cell_contents":
            return _cell_slot(holder)
        if key == "func" and isinstance(holder, functools.partial):
            return _partial_slot(holder, "func")
        if key == "__func__":
            return (holder.__init__, lambda: holder.__func__)
        descriptor = dict(_member_slots(holder))[key]
        return (functools.partial(descriptor.__set__, holder), lambda: descriptor.__get__(holder))
    except Exception:
        return None


def _dict_slot(holder: dict[str, Any], key: str) -> _Slot:
    return (functools.partial(holder.__setitem__, key), lambda: holder.get(key))


def _cell_slot(cell: types.CellType) -> _Slot:
    def put(value: object) -> None:
        cell.cell_contents = value

    def get() -> object:
        try:
            return cell.cell_contents
        except ValueError:  # emptied since
            return _MISSING

    return (put, get)


def _indexed_slot(holder: Any, key: tuple[str, Any]) -> _Slot | None:
    kind, index = key
    if kind == "class":
        return _class_slot(holder, index)
    if kind == "__defaults__":

        def put_default(value: object) -> None:
            values = list(holder.__defaults__)
            values[index] = value
            holder.__defaults__ = tuple(values)

        return (put_default, lambda: (holder.__defaults__ or ())[index])
    if kind == "args" and isinstance(holder, functools.partial):
        return _partial_slot(holder, index)
    return None


def _partial_slot(holder: functools.partial[Any], index: str | int) -> _Slot:
    def put(value: object) -> None:
        func, args = holder.func, holder.args
        if index == "func":
            func = value  # type: ignore[assignment]
        else:
            args = (*args[: int(index)], value, *args[int(index) + 1 :])
        holder.__setstate__((func, args, holder.keywords, vars(holder) or None))  # type: ignore[attr-defined]

    def get() -> object:
        return holder.func if index == "func" else holder.args[int(index)]

    return (put, get)


def _class_slot(cls: type, name: str) -> _Slot:
    """A class attribute: a Python function must not become a method when set."""

    def put(value: object) -> None:
        if type(value) is types.FunctionType:
            value = staticmethod(value)
        setattr(cls, name, value)

    def get() -> object:
        value = cls.__dict__.get(name)
        return value.__func__ if type(value) is staticmethod else value

    return (put, get)
