"""Two timers set for one instant by different tasks: a write-behind cache.

Orders are buffered and written to the database `FLUSH_DELAY` after the
first write of a batch, by a flusher task the first write starts. The report job is told of each
batch by the ingest job through a queue and then, in the buggy variant,
waits `FLUSH_DELAY` itself, "by then the cache has flushed". Its timer is
set a few microseconds after the cache's, for the same delay: on a real
clock that reads time in ticks (Windows' 15.6 ms, a loop that batches its
timers) both are due at one instant and either may fire first. The correct
report job asks the cache to flush (`sync`) instead of guessing.
"""

from __future__ import annotations

import asyncio

from tests.quality.planted._defaults import run_program

FLUSH_DELAY = 0.05
BATCHES = 4


class WriteBehindCache:
    """Writes go to memory at once and to the database in one batch later."""

    def __init__(self, database: dict[str, int]) -> None:
        self._database = database
        self._dirty: dict[str, int] = {}
        self._flush: asyncio.Task[None] | None = None

    def put(self, key: str, value: int) -> None:
        self._dirty[key] = value
        if self._flush is None:
            self._flush = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(FLUSH_DELAY)  # gather the batch's other writes first
        self._flush = None
        self._write_back()

    def _write_back(self) -> None:
        self._database.update(self._dirty)
        self._dirty.clear()

    async def sync(self) -> None:
        """Write everything buffered now."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        self._write_back()


def program(buggy: bool) -> object:
    async def main() -> int:
        database: dict[str, int] = {}
        cache = WriteBehindCache(database)
        batches: asyncio.Queue[list[str]] = asyncio.Queue()

        async def ingest() -> None:
            for batch in range(BATCHES):
                keys = [f"order-{batch}-{line}" for line in range(3)]
                for line, key in enumerate(keys):
                    cache.put(key, line)
                await batches.put(keys)
                await asyncio.sleep(0.2)

        async def report() -> int:
            reported = 0
            for _ in range(BATCHES):
                keys = await batches.get()
                if buggy:
                    await asyncio.sleep(FLUSH_DELAY)  # "the cache has flushed by now"
                else:
                    await cache.sync()
                missing = [key for key in keys if key not in database]
                assert not missing, f"report ran before the flush: {len(missing)} orders missing"
                reported += len(keys)
            return reported

        reported, _ = await asyncio.gather(report(), ingest())  # the report job waits first
        return reported

    return main


def run(seed: int, buggy: bool) -> str | None:
    return run_program(program(buggy), seed)
