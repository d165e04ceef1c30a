"""Small targets for the tests of `seedbed explore`'s folder, its readers and its memory."""

from __future__ import annotations

import asyncio
import random

import seedbed

POINTS = 40  # coverage points `steady` reaches in every run


async def steady() -> None:
    """40 coverage points, two buckets each: every feature is found in a few runs,
    after which no run finds anything new (the corpus stops growing)."""
    for point in range(POINTS):
        seedbed.coverage(f"point {point}", random.randrange(2))
    await asyncio.sleep(0.001)


TITLE = "\x1b]0;pwned\x07"  # sets a terminal's window title
CLEAR = "\x1b[2J"  # clears a terminal's screen
RLO = "\u202e"  # right-to-left override: shows what follows reversed


async def hostile() -> None:
    """A program whose failure message, assertion and value reprs carry escape sequences."""
    seedbed.sometimes(True, f"reached {TITLE}")
    await asyncio.sleep(0.001)
    raise AssertionError(f"boom {CLEAR}{TITLE}{RLO}gnp.exe")
