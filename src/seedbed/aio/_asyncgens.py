"""Which task's context each async generator belongs to, for its finalization.

An async generator abandoned mid-iteration is finalized when it is garbage
collected, which may happen while a different task (in a world, a different
node) is running. asyncio then closes it in whatever context is current; we
close it in the context of the task that first iterated it.

CPython clears an async generator's weak references before it calls the
finalizer hook, so the owner cannot be looked up through the object: it is
kept by `id()`, moved aside by the weak reference's callback, and picked up
by the finalizer that runs right after. `id()` is only a lookup key here,
never an iteration order.
"""

from __future__ import annotations

import contextvars
import weakref
from typing import Any

Owner = tuple["weakref.ref[Any]", contextvars.Context]


class AsyncGenTracker:
    """Owners of the async generators a loop has seen start."""

    __slots__ = ("_dying", "_live")

    def __init__(self) -> None:
        self._live: dict[int, Owner] = {}  # insertion order: first-iteration order
        self._dying: dict[int, contextvars.Context] = {}

    def started(self, agen: Any) -> None:
        """The firstiter hook: remember the context of the task iterating `agen`."""
        key = id(agen)
        self._live[key] = (weakref.ref(agen, self._make_mover(key)), contextvars.copy_context())

    def _make_mover(self, key: int) -> Any:
        def move(ref: weakref.ref[Any]) -> None:
            owner = self._live.get(key)
            if owner is not None and owner[0] is ref:
                del self._live[key]
                self._dying[key] = owner[1]

        return move

    def owner_context(self, agen: Any) -> contextvars.Context | None:
        """The finalizer hook's lookup: the owner's context, forgotten once returned."""
        key = id(agen)
        context = self._dying.pop(key, None)
        if context is None:
            owner = self._live.pop(key, None)
            context = owner[1] if owner is not None else None
        return context

    def take_all(self) -> list[tuple[Any, contextvars.Context]]:
        """The generators still alive with their owners' contexts, in first-iteration
        order; forget them all."""
        owned = [(ref(), context) for ref, context in self._live.values()]
        self._live.clear()
        self._dying.clear()
        return [(agen, context) for agen, context in owned if agen is not None]
