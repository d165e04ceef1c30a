"""Using the loop on its own: checkpoints, a loop factory, an event loop policy."""

from __future__ import annotations

import asyncio
from typing import Any

from seedbed._core.validate import check_seed
from seedbed.aio._collect import at_boundary
from seedbed.aio._state import LoopConfig
from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import UsageError


async def checkpoint(reason: str) -> None:
    """An explicit scheduling point: let the simulation pick who runs next.

    Inside a seedbed loop the calling task parks, the tasks already ready run,
    and the entropy picks which parked task resumes first, so the interleavings
    around `reason` are explored across seeds. On any other loop it returns at
    once without yielding: production code can keep its checkpoints.
    """
    loop = asyncio.get_running_loop()
    if isinstance(loop, SeedbedLoop):
        await loop.park(reason)


def new_event_loop(seed: int = 0, **options: Any) -> SeedbedLoop:
    """A standalone deterministic loop, e.g. for `asyncio.Runner(loop_factory=...)`.

    `options` are `LoopConfig` fields (`max_steps`, `max_time`, `strict`,
    `timer_jitter_max`, `cpu_cost_min`, `cpu_cost_max`, `explore_tasks`,
    `clock_resolution`).
    """
    return _standalone(check_seed(seed), _config(options))


class EventLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """Hands out seedbed loops, so an existing asyncio test suite runs on virtual time.

    Every new loop gets the same seed and options, so each test is
    deterministic on its own.
    """

    def __init__(self, seed: int = 0, **options: Any) -> None:
        super().__init__()
        self._seed = check_seed(seed)
        self._config = _config(options)

    def new_event_loop(self) -> SeedbedLoop:
        return _standalone(self._seed, self._config)


def _standalone(seed: int, config: LoopConfig) -> SeedbedLoop:
    """A loop the caller holds: a real thread may have been handed it before it
    runs, so an idle wait names the live threads (see `_threads`). Before it is
    made, what earlier such loops' runs left and their callers dropped is
    finalized (`_collect.at_boundary`): here, not in the next test's code."""
    at_boundary(forget=True)
    loop = SeedbedLoop(seed=seed, config=config)
    loop._standalone = True
    return loop


def _config(options: dict[str, Any]) -> LoopConfig:
    try:
        return LoopConfig(**options)
    except TypeError as exc:
        raise UsageError(f"unknown loop option: {exc}") from None
