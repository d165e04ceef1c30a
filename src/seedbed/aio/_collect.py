"""Garbage collection at points fixed by the step count.

CPython's automatic collector runs when allocations cross a threshold, and
what is on the heap before a run (another seed's leftovers, the test
runner's objects) decides when: finalizers (`__del__`, weakref callbacks, an
abandoned coroutine's `finally`) then run at a step that differs between runs
of one seed. So for each stretch of running:

- automatic collection is off, and everything already on the heap is frozen
  (`gc.freeze()`): the run's collections look only at the run's own objects,
  and garbage from before the run is never finalized inside it;
- every `REFILLS` x 256 steps the young generation is collected (and every
  `MIDDLE_EVERY`-th time the middle one, every `FULL_EVERY`-th time all of
  the run's objects), at the step the cost table is refilled, which depends
  on the step count only;
- at the end of the stretch, before interposition ends, the run's garbage is
  collected once more, so its finalizers run at a fixed point, inside the run.

Limit: a stretch freezes what earlier stretches of the same run left (a run
is several stretches: `main`, then teardown; a world's `advance` calls make
more), so a cycle made in one stretch and dropped in a later one is not
collected inside the run; its finalizer runs after, outside the simulation.

What a loop other code holds leaves alive after its runs is finalized at
its close or before the next such loop is made, if it is garbage by then
(`_leftovers`, issue 42 item 6).

Between runs (`between_runs`): a process that runs seed after seed (a
sweep's worker, `seedbed.sweep`, a test session) would never collect what
runs left behind: collection is off while a run goes, every stretch freezes
the heap, and CPython's automatic full collection counts only objects that
grew old under it, not those unfrozen into its oldest generation. The
store's sweep workers grew by 2-4 MB a seed (3 GB after 800 seeds of
`contention`). So after a run, outside it, the garbage goes once the heap
has doubled since the last time: amortized, like CPython's own rule, and
never inside a run, so no run's events depend on what ran before it.

Garbage-collector callbacks (`gc.callbacks`) registered before a stretch are
taken out of the list for it and put back, in their places, when it ends:
every collection inside a run is the run's own (automatic collection is off,
the steps above decide when), and a process's monitoring of its collector
must not run as part of the simulation. distributed's GC diagnosis, once an
in-process Dask cluster had started, read `/proc/<pid>/statm` from its
callback in every later run of the process, which failed each run with a
`SimulationEscape` the program never made (164 in one bench run of
`bench/sweep.py`). Callbacks the program registers during the run stay in
the list and run inside the simulation, escapes and all. Limit: a program
that removes, during a run, a callback registered before it gets the
`ValueError` of a callback not in the list.

Objects a process froze itself (`gc.freeze()` before forking workers; CPython
3.12.1 starts with a few hundred frozen) are unfrozen when a stretch ends,
with the rest: that costs their copy-on-write pages, never correctness.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

from seedbed._core.contract import require
from seedbed.aio import _leftovers

# Cost-table refills (of 256 steps each) between young collections: every
# 4,096 steps. bench/gc_cost.py, instructions per sleep step against no
# collection at all: every 256 steps +5.8%, every 1,024 +2.2%, every 4,096
# -1.4% (collected memory is reused), CPython's automatic collection +3.0%.
REFILLS = 16
MIDDLE_EVERY = 8
FULL_EVERY = 64
# Between runs: collect once pymalloc's blocks are GROWTH times those left by the
# last collection, and never below FLOOR blocks (a small heap is not worth a pass).
GROWTH = 2
FLOOR = 200_000
_left = [0]  # blocks left by the last collection between runs
_running = [0]  # stretches under way in this process (any thread)


def collect_at(refills: int) -> None:
    """Called at each cost-table refill (every `_state.COST_TABLE_SIZE` steps)."""
    require(refills > 0, "collections come after the first refill", refills=refills)
    if refills % REFILLS:
        return
    number = refills // REFILLS
    if number % FULL_EVERY == 0:
        gc.collect(2)
    elif number % MIDDLE_EVERY == 0:
        gc.collect(1)
    else:
        gc.collect(0)


class Stretch:
    """The collector's state around one stretch of running.

    `watch`: the loop is one other code holds, whose survivors it drops after
    the loop is done with them (`_leftovers`); `awaited`, the future it runs.
    """

    __slots__ = ("set_aside", "was_enabled", "watch")

    def __init__(self, watch: bool = False, awaited: asyncio.Future[Any] | None = None) -> None:
        self.was_enabled = gc.isenabled()
        self.watch = watch
        _running[0] += 1
        self.set_aside = _set_aside_callbacks()
        gc.disable()
        if watch:
            _leftovers.watch_awaited(awaited)
        gc.freeze()

    def collect(self) -> None:
        """The run's own garbage, finalized at the end of the stretch."""
        gc.collect()
        if self.watch:
            _leftovers.watch()

    def end(self) -> None:
        gc.unfreeze()
        _put_back_callbacks(self.set_aside)
        _running[0] -= 1
        if self.was_enabled:
            gc.enable()


def _set_aside_callbacks() -> list[Any]:
    """`gc.callbacks` as they are before a stretch, emptied for it (see above)."""
    before = list(gc.callbacks)
    gc.callbacks.clear()
    return before


def _put_back_callbacks(before: list[Any]) -> None:
    """The callbacks set aside, first, then those the stretch registered and kept."""
    added = [callback for callback in gc.callbacks if all(callback is not b for b in before)]
    gc.callbacks[:] = [*before, *added]
    require(len(gc.callbacks) >= len(before), "callbacks set aside for a run come back")


def at_boundary(forget: bool) -> bool:
    """A held loop closed (`forget` false) or about to be made (true): what its
    runs left is finalized if it is garbage (`_leftovers.at_boundary`)."""
    return _leftovers.at_boundary(forget, running=_running[0] > 0)


def between_runs() -> bool:
    """Collect what earlier runs left, once the heap has doubled since the last time.

    Call it only outside a run (between seeds): a finalizer it runs belongs to
    no simulation. Returns whether it collected (for tests).
    """
    require(
        asyncio.events._get_running_loop() is None,
        "garbage between runs is collected outside any running loop",
    )
    blocks = sys.getallocatedblocks()
    if blocks < max(FLOOR, GROWTH * _left[0]):
        return False
    gc.collect()
    _left[0] = sys.getallocatedblocks()
    return True
