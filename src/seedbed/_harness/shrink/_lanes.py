"""Raw bits as lanes: how far a batch of raw draws is from typical, and how to
make part of it typical.

Bits are drawn in batches (a link's 64 latencies, a loop's CPU costs) and
recorded as one choice, a hex string. Read as uniform draws, each 32-bit
lane is one decision (a hop's body or its spike), and its typical value is
the middle one (`seedbed._core.choices.typical_bits`). A shrinker that can
only quiet the whole batch keeps every spike or none; lane by lane it keeps
the one slow hop a failure needs.
"""

from __future__ import annotations

from seedbed._core.choices import Value, typical_bits

LANE = 32
_MASK = (1 << LANE) - 1


def is_bits(value: Value) -> bool:
    """Whether a recorded value is raw bits (a hex string) with something in it."""
    return isinstance(value, str) and value.startswith("0x") and value != "0x0"


def lanes_of(value: Value) -> int:
    """How many 32-bit lanes a raw-bits value holds (0 if it is not one)."""
    if not is_bits(value):
        return 0
    assert isinstance(value, str)
    return max(1, -(-(len(value) - 2) * 4 // LANE))


def lanes_off_typical(value: Value) -> int:
    """How many of a raw-bits value's 32-bit lanes are not the middle value."""
    if not is_bits(value):
        return 0
    assert isinstance(value, str)
    bits, middle, off = int(value, 16), typical_bits(LANE), 0
    while bits:
        off += (bits & _MASK) != middle
        bits >>= LANE
    return off


def with_typical_lanes(value: Value, start: int, count: int) -> Value:
    """Raw bits with lanes [start, start + count) set to the typical middle value."""
    assert isinstance(value, str)
    bits = int(value, 16)
    for lane in range(start, min(start + count, lanes_of(value))):
        bits = (bits & ~(_MASK << (LANE * lane))) | (typical_bits(LANE) << (LANE * lane))
    return hex(bits)
