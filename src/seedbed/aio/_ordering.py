"""Creation order, not memory order, where asyncio iterates a set of awaitables.

`asyncio.as_completed(aws)` (3.11-3.13) starts with `{ensure_future(f) for f
in set(aws)}`: a set of coroutines, which hash by address, so the tasks it
makes are created, numbered and started in an order set by the allocator. In
one process, one seed gave 10 different results in 30 runs, all with the same
trace hash. Inside a run the stand-in below turns the awaitables into futures
first, in argument order (duplicates dropped, as the set would), and hands
the stdlib that list: the tasks are created in the order the caller wrote,
and the set the stdlib then builds holds tasks, which hash by creation number
(`SimTask`).

The other asyncio paths that build sets hold tasks or futures, never
coroutines: `wait` (`set(fs)`, and the `done`/`pending` sets it returns),
`TaskGroup._tasks`, `all_tasks()`, and the `running_tasks` of `staggered_race`
on the patch releases that made it a set. Tasks order them by creation.
`gather` keeps argument order (a dict) and `shield` holds one future.

What stays in memory order: futures from `loop.create_future()` (a subclass
hashing by creation number costs 12% of a sleep step, measured in
instructions: C tasks take their fast path only for exact `Future`s) and
tasks made by a custom task factory. In a set whose iteration order matters
(`asyncio.wait` on plain futures, `as_completed` on futures already done),
they iterate in address order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from seedbed.aio import _providers

# The stdlib's own: a provider's globals are never rebound (see `_providers`).
_real_as_completed = asyncio.tasks.as_completed


def _in_a_run() -> asyncio.AbstractEventLoop | None:
    """The running loop if it is a simulation's, else None."""
    from seedbed.aio.loop import SeedbedLoop  # the loop imports this module

    loop = asyncio.events._get_running_loop()
    return loop if isinstance(loop, SeedbedLoop) else None


def as_completed(fs: Iterable[Any], *, timeout: float | None = None) -> Any:
    """`asyncio.as_completed`, with its tasks created in argument order inside a run."""
    real = _real_as_completed
    loop = _in_a_run()
    if loop is None or asyncio.isfuture(fs) or asyncio.iscoroutine(fs):
        return real(fs, timeout=timeout)  # outside a run, or the stdlib's TypeError
    futures = [asyncio.ensure_future(aw, loop=loop) for aw in dict.fromkeys(fs)]
    return real(futures, timeout=timeout)


def patched_functions() -> list[tuple[object, object]]:
    """(stdlib function, stand-in) pairs, rebound wherever module globals hold them."""
    return [(_real_as_completed, as_completed)]


_providers.register(__name__, patched_functions)
