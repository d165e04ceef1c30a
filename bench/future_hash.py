"""What a future hashing by creation number would cost a sleep step, in instructions.

Futures from `loop.create_future()` hash by address, so a set of them
iterates in memory order. The obvious fix is a `Future` subclass with a
`__hash__` that numbers futures lazily (nothing extra at creation). This
counts, under callgrind, the instructions of 1,000 tasks each sleeping N
times with plain futures and with that subclass, and prints the cost per
sleep step of each (the difference of a 40-sleep and a 0-sleep run, so
start-up cancels out).

    python bench/future_hash.py          # needs valgrind
"""

from __future__ import annotations

import asyncio
import functools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _callgrind import count_instructions

TASKS, SLEEPS = 1_000, 40


class NumberedFuture(asyncio.Future[Any]):
    """Hashes by a number given on first hash, from the loop's own counter."""

    __slots__ = ()

    def __hash__(self) -> int:
        number: int | None = self.__dict__.get("_number")
        if number is None:
            loop: Any = self.get_loop()
            number = self.__dict__["_number"] = next(loop._numbers)
        return number


def workload(variant: str, sleeps: int) -> None:
    from seedbed.aio.loop import SeedbedLoop

    loop = SeedbedLoop(1)
    if variant == "numbered":
        loop.create_future = functools.partial(NumberedFuture, loop=loop)  # type: ignore[method-assign]

    async def sleeper(index: int) -> None:
        for sleep in range(sleeps):
            await asyncio.sleep(((index * 7919 + sleep * 104_729) % 50 + 1) / 1000)

    async def main() -> None:
        await asyncio.gather(*(sleeper(index) for index in range(TASKS)))

    loop.run_until_complete(main())


def per_step(variant: str) -> float:
    full = count_instructions([__file__, "--child", variant, str(SLEEPS)])
    empty = count_instructions([__file__, "--child", variant, "0"])
    return (full - empty) / (TASKS * SLEEPS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        workload(sys.argv[2], int(sys.argv[3]))
    else:
        plain, numbered = per_step("plain"), per_step("numbered")
        print(
            f"instructions per sleep step: plain futures {plain:,.0f}, "
            f"numbered futures {numbered:,.0f} (+{numbered / plain - 1:.1%})"
        )
