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
tasks of a `Task` subclass the program defined (every other task is the
loop's own, see `_taskclass`). In a set whose iteration order matters
(`asyncio.wait` on plain futures, `as_completed` on futures already done),
they iterate in address order. For `asyncio.wait` that order is at least
made visible: when the awaitables come as a list or tuple and are not all
the loop's own tasks, the order `done` and `pending` iterate in is folded
into the trace (each member as its task number or its position among the
arguments), so two processes that would see different orders get different
hashes, and a self-check reports the divergence instead of one hash with two
results. A wait on the loop's tasks alone adds no event, nor does a wait on
a set (its own order is already the allocator's: positions in it identify
nothing). seedbed's own waits, whose order decides nothing, call
`stdlib_wait`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from seedbed.aio import _providers
from seedbed.aio._handles import SimTask

if TYPE_CHECKING:
    from seedbed.aio.loop import SeedbedLoop

# The stdlib's own: a provider's globals are never rebound (see `_providers`).
_real_as_completed = asyncio.tasks.as_completed
_real_wait = asyncio.tasks.wait


def _in_a_run() -> SeedbedLoop | None:
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


async def wait(
    fs: Iterable[Any], *, timeout: float | None = None, return_when: str = asyncio.ALL_COMPLETED
) -> tuple[set[Any], set[Any]]:
    """`asyncio.wait`; inside a run, an order set by addresses is traced (see above)."""
    real = _real_wait
    loop = _in_a_run()
    if loop is None or asyncio.isfuture(fs) or asyncio.iscoroutine(fs):
        return await real(fs, timeout=timeout, return_when=return_when)
    ordered = type(fs) in (list, tuple)  # else the positions are no identity either
    given = list(fs)
    done, pending = await real(given, timeout=timeout, return_when=return_when)
    if ordered and not all(type(f) is SimTask for f in given):
        positions = {id(f): index for index, f in reversed(list(enumerate(given)))}
        loop.trace.emit(
            "set order", "asyncio.wait", _order(done, positions), _order(pending, positions)
        )
    return done, pending


def stdlib_wait(
    fs: Iterable[Any], *, timeout: float | None = None, return_when: str = asyncio.ALL_COMPLETED
) -> Coroutine[Any, Any, tuple[set[Any], set[Any]]]:
    """The stdlib's `asyncio.wait`, for seedbed's own waits whose order decides nothing.

    Call it as `_ordering.stdlib_wait`: a copy of it in another module's
    globals would be rebound to the traced stand-in during a run.
    """
    return _real_wait(fs, timeout=timeout, return_when=return_when)


def _order(members: set[Any], positions: dict[int, int]) -> str:
    """How a set iterates: task numbers, and argument positions for the rest."""
    return ",".join(
        f"t{f.number}" if type(f) is SimTask else f"a{positions.get(id(f), -1)}" for f in members
    )


def patched_functions() -> list[tuple[object, object]]:
    """(stdlib function, stand-in) pairs, rebound wherever module globals hold them."""
    return [(_real_as_completed, as_completed), (_real_wait, wait)]


_providers.register(__name__, patched_functions)
