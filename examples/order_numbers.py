"""Order numbers handed out by three request handlers racing across `sleep(0)`.

Each handler parses its request in chunks, yielding between them, then takes
the next order number: it reads the last one, journals the next (the journal
write yields) and stores it. In `race` two handlers can read the same last
number: whether they do is the order in which handlers resume within one
loop iteration, I/O timing on a real server. `locked` takes the number
under a lock. Every schedule of them within two delays of the default order:

    seedbed explore examples.order_numbers:race --exhaustive --max-delays 2     # exits 1
    seedbed explore examples.order_numbers:locked --exhaustive --max-delays 2   # exits 0
"""

from __future__ import annotations

import asyncio


async def _numbered(state: dict[str, int], chunks: int, lock: asyncio.Lock | None) -> int:
    for _ in range(chunks):
        await asyncio.sleep(0)  # parse a chunk, let the others run
    if lock is None:
        number = state["last"] + 1
        await asyncio.sleep(0)  # the journal write yields
        state["last"] = number
        return number
    async with lock:
        number = state["last"] + 1
        await asyncio.sleep(0)
        state["last"] = number
        return number


async def race() -> list[int]:
    """Three handlers take order numbers; the read-yield-write races."""
    state = {"last": 0}
    given = await asyncio.gather(*(_numbered(state, chunks, None) for chunks in (1, 2, 3)))
    assert len(set(given)) == 3, f"two orders got one number: {sorted(given)}"
    return list(given)


async def locked() -> list[int]:
    """The same handlers, the read-yield-write under a lock."""
    state, lock = {"last": 0}, asyncio.Lock()
    given = await asyncio.gather(*(_numbered(state, chunks, lock) for chunks in (1, 2, 3)))
    assert len(set(given)) == 3, f"two orders got one number: {sorted(given)}"
    return list(given)
