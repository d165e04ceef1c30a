"""`asyncio.Task(...)` inside a run: a task of the loop's own, whatever made it.

`loop.create_task` numbers a task (its hash, hence the order of the sets
`asyncio.wait` returns), names it from the loop's counter, records its node
and traces its creation. Code that calls the class itself skips all of that:
`asyncio.Task(coro, loop=loop, eager_start=True)` (aiohttp's request handler
on 3.12+), the stdlib's `eager_task_factory` (a closure over the class) and
a factory written as `lambda loop, coro, **kw: asyncio.Task(coro, loop=loop,
**kw)`. Such a task hashed by address (one seed, one trace hash, different
`done` orders in two processes), took its name from asyncio's process-wide
counter (a seed's result depended on the seeds run before it) and was not
buried when its node crashed.

So inside a run `asyncio.Task` is this stand-in, rebound wherever it was
copied, like the clocks (`_interpose`, `_holders`: the stdlib eager factory's
closure cell included). Calling it with a seedbed loop (given, or running)
makes the loop's own task; any other loop, or no run, gets a stock task.
It is a subclass of the real class so that classes derived from it inside a
run still work, and `isinstance`/`issubclass` against it answer as against
the real class, so a module that copied it during a run keeps working after.

Out of reach: a `Task` subclass defined by the program before the run (its
instances are made by the subclass, which hashes by address) and factories
that build such instances.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypeGuard

from seedbed.aio import _providers

if TYPE_CHECKING:
    from seedbed.aio.loop import SeedbedLoop

# The real class. A provider's globals are never rebound (see `_providers`).
_RealTask = asyncio.Task


class _StandInType(type):
    """The stand-in's metaclass: routes construction, answers type checks as Task."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is not TaskStandIn:  # a subclass defined during a run: its own rules
            return super().__call__(*args, **kwargs)
        loop = kwargs.get("loop")
        if loop is None:
            loop = asyncio.events._get_running_loop()
        if not _is_seedbed(loop) or len(args) + ("coro" in kwargs) != 1:
            return _RealTask(*args, **kwargs)  # another loop, or the stdlib's TypeError
        kwargs.pop("loop", None)
        coro = args[0] if args else kwargs.pop("coro")
        name, context = kwargs.pop("name", None), kwargs.pop("context", None)
        return loop._new_task(coro, name, context, kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, _RealTask)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, _RealTask)


class TaskStandIn(_RealTask[Any], metaclass=_StandInType):
    """What `asyncio.Task` names inside a run (never instantiated itself)."""

    __slots__ = ()


TaskStandIn.__name__ = TaskStandIn.__qualname__ = "Task"
TaskStandIn.__module__ = _RealTask.__module__


def _is_seedbed(loop: object) -> TypeGuard[SeedbedLoop]:
    from seedbed.aio.loop import SeedbedLoop  # the loop imports this module

    return isinstance(loop, SeedbedLoop)


def patched_functions() -> list[tuple[object, object]]:
    """(real class, stand-in), rebound wherever module globals or holders keep it."""
    return [(_RealTask, TaskStandIn)]


_providers.register(__name__, patched_functions)
