"""Three tasks racing across `sleep(0)`: an order-number allocator.

Three request handlers parse requests of different lengths, yielding to
the loop between chunks (`await asyncio.sleep(0)`, as a handler of a big
request should), then take an order number. The buggy allocator reads the
last number, journals the next one (the journal write yields) and only then
stores it: correct as long as the handler that read first also resumes
first, which is what the FIFO order of one loop iteration happens to give.
Which handler resumes first in one iteration is I/O timing on a real
server (whose request finished parsing first). The correct allocator takes
the number before it awaits anything.
"""

from __future__ import annotations

import asyncio

from tests.quality.planted._defaults import run_program


class OrderNumbers:
    """Hands out order numbers, each one journaled."""

    def __init__(self, reserve_first: bool) -> None:
        self._last = 0
        self._reserve_first = reserve_first
        self.journal: list[int] = []

    async def next(self) -> int:
        if self._reserve_first:
            self._last += 1
            number = self._last
            await self._write_journal(number)
            return number
        number = self._last + 1
        await self._write_journal(number)
        self._last = number
        return number

    async def _write_journal(self, number: int) -> None:
        self.journal.append(number)
        await asyncio.sleep(0)  # the journal flushes in the background; let others run


async def handle(request: list[bytes], numbers: OrderNumbers) -> int:
    for _chunk in request:
        await asyncio.sleep(0)  # parse one chunk, then let the other handlers run
    return await numbers.next()


def program(buggy: bool) -> object:
    async def main() -> list[int]:
        numbers = OrderNumbers(reserve_first=not buggy)
        requests = [[b"x" * 512] * chunks for chunks in (1, 2, 3)]
        given = await asyncio.gather(*(handle(request, numbers) for request in requests))
        assert len(set(given)) == len(given), f"two orders got one number: {sorted(given)}"
        return list(given)

    return main


def run(seed: int, buggy: bool) -> str | None:
    return run_program(program(buggy), seed)
