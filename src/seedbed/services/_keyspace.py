"""fakeredis's server and databases, made deterministic and watched for changes.

fakeredis keeps two collections whose iteration order follows memory
addresses: the callbacks that wake clients blocked on a database (a set of
closures) and the subscribers of a channel (a `WeakSet` of connections).
Iterating them decides which blocked client is served first and in which
order subscribers receive a message, so here they iterate in the order
entries were added (a blocked client is served first come, first served, as
real Redis serves them). And a Redis set's members iterate in the order of
a Python set of bytes, which follows `PYTHONHASHSEED`: SMEMBERS, SINTER and
the records a set's key is written as would differ between processes, so
`order_sets` makes them iterate in the order members were added (their
dict's order; fakeredis keeps everything else of a set in that order too).
It changes fakeredis's class for the whole process, once the stand-in
starts: a set's order is unspecified, and this one is as valid.

Every change to a key is reported to a `Changes` (the append-only file's
journal) as the pair (database number, key).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from fakeredis._core import Database, FakeServer
from fakeredis._helpers import current_time
from fakeredis.model import ExpiringMembersSet

from seedbed.services._draws import label_draws


class Changes(Protocol):
    """What is told of every key a command changes (`_aof.Journal`)."""

    def touch(self, db: int, key: bytes) -> None: ...


class _OrderedCallbacks:
    """A set of callbacks that iterates in the order they were added."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[Callable[[], None], None] = {}

    def add(self, callback: Callable[[], None]) -> None:
        self._items[callback] = None

    def remove(self, callback: Callable[[], None]) -> None:
        del self._items[callback]

    def discard(self, callback: Callable[[], None]) -> None:
        self._items.pop(callback, None)

    def __iter__(self) -> Iterator[Callable[[], None]]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)


class OrderedWeakSet:
    """A weak set of connections that iterates in the order they were added."""

    __slots__ = ("_refs",)

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref[Any]] = {}

    def add(self, item: Any) -> None:
        if id(item) not in self._refs:
            self._refs[id(item)] = weakref.ref(item, self._forget(id(item)))

    def _forget(self, key: int) -> Callable[[weakref.ref[Any]], None]:
        def forget(ref: weakref.ref[Any]) -> None:
            if self._refs.get(key) is ref:
                del self._refs[key]

        return forget

    def discard(self, item: Any) -> None:
        self._refs.pop(id(item), None)

    def remove(self, item: Any) -> None:
        del self._refs[id(item)]

    def __contains__(self, item: Any) -> bool:
        ref = self._refs.get(id(item))
        return ref is not None and ref() is item

    def __iter__(self) -> Iterator[Any]:
        alive = [ref() for ref in list(self._refs.values())]
        return iter([item for item in alive if item is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return len(self) > 0


def _members_in_order(self: ExpiringMembersSet) -> Iterator[bytes]:
    """`ExpiringMembersSet.__iter__`, in the order the members were added."""
    self._expire_members()
    now = current_time()
    return iter([k for k, when_ms in self._values.items() if when_ms is None or when_ms >= now])


def order_sets() -> None:
    """Make fakeredis's sets iterate in a fixed order (see the module docstring)."""
    if ExpiringMembersSet.__iter__ is not _members_in_order:
        ExpiringMembersSet.__iter__ = _members_in_order  # type: ignore[method-assign]


class Keyspace(Database):
    """One numbered database whose changes are reported and whose wake-ups are ordered."""

    def __init__(self, server: SimServer, index: int) -> None:
        super().__init__(server.lock)
        # fakeredis declares a set; this one has a set's methods and a fixed order
        self._change_callbacks = _OrderedCallbacks()  # type: ignore[assignment]
        self.index = index
        self.changes = server.changes

    def notify_watch(self, key: bytes) -> None:
        self.changes.touch(self.index, key)
        super().notify_watch(key)

    def __setitem__(self, key: bytes, value: Any) -> None:
        self.changes.touch(self.index, key)
        super().__setitem__(key, value)

    def __delitem__(self, key: bytes) -> None:
        self.changes.touch(self.index, key)
        super().__delitem__(key)

    def swap(self, other: Database) -> None:
        """SWAPDB: every key of both databases changed."""
        assert isinstance(other, Keyspace), "every database of a SimServer is a Keyspace"
        for db in (self, other):
            for key in list(db._dict):
                self.changes.touch(db.index, key)
        super().swap(other)
        for db in (self, other):
            for key in list(db._dict):
                self.changes.touch(db.index, key)


class _Databases(dict[int, Keyspace]):
    """`server.dbs`: a database made on first use, numbered, like fakeredis's defaultdict."""

    def __init__(self, server: SimServer) -> None:
        super().__init__()
        self._server = server

    def __missing__(self, index: int) -> Keyspace:
        db = self[index] = Keyspace(self._server, index)
        return db


class SimServer(FakeServer):
    """The stand-in's one fakeredis server: its databases report changes to `changes`."""

    def __init__(self, changes: Changes, version: tuple[int, ...]) -> None:
        super().__init__(version=version, server_type="redis")
        order_sets()
        label_draws()
        self.changes = changes
        # fakeredis declares these as a defaultdict of Database and of WeakSet; these
        # have the methods it uses, and a fixed order
        self.dbs = _Databases(self)  # type: ignore[assignment]
        self.subscribers = defaultdict(OrderedWeakSet)  # type: ignore[arg-type]
        self.psubscribers = defaultdict(OrderedWeakSet)  # type: ignore[arg-type]
        self.ssubscribers = defaultdict(OrderedWeakSet)  # type: ignore[arg-type]
