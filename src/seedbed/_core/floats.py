"""Float arithmetic that gives one result on every supported CPython.

A value that feeds a draw or a schedule (a rate the nemesis picks a fault
by, a wait a shrinker hands back to a run) must be the same bits on 3.11,
3.12 and 3.13, or one seed runs differently on each. IEEE-754 additions,
multiplications and divisions, `round`, `int`, `float(str)` and float
formatting are the same everywhere; the built-in `sum()` of floats is not:
CPython 3.12 made it compensated (Neumaier), so `sum([0.1] * 10)` is
0.9999999999999999 on 3.11 and 1.0 on 3.12. `ordered_sum` is the plain
left-to-right sum, as `sum()` computed it up to 3.11, so runs on 3.11 keep
their values and the newer interpreters agree with them.

`math.log`, `log1p` and `exp` come from the platform's C library: the same
on one platform for every CPython, though two C libraries may differ in the
last bit (see `entropy`).
"""

from __future__ import annotations

from collections.abc import Iterable


def ordered_sum(values: Iterable[float]) -> float:
    """The floats added left to right, one rounding per addition, on every CPython."""
    total = 0.0
    for value in values:
        total += value
    return total
