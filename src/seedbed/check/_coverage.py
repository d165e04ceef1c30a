"""User-declared coverage: states worth reaching, and quantities worth pushing.

`coverage("replication lag", bucket)` names a state the user cares about
(bucket the value yourself: a power of two, a phase name), and
`maximize("log length", n)` / `minimize(...)` record the largest or smallest
value a run saw, so `seedbed explore` can keep the runs that push a quantity
towards a limit (Antithesis's numeric guidance). None of them ever fails a
run or draws a choice: they are features of a run for a search to read.

Outside a simulation each returns at once (one C call and a type check), so
production code keeps them, like the assertions.
"""

from __future__ import annotations

import math

from seedbed._core.choices import draws_so_far
from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import UsageError
from seedbed.faults._hooks import _running_loop, hooks_of


def coverage(name: str, bucket: object = None) -> None:
    """Note that the run reached state `name` (in `bucket`, if given).

    Each distinct (name, bucket) is one feature: keep buckets few (bucket a
    number by its power of two, `value.bit_length()`), or every run is new.
    """
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return
    key = name if bucket is None else f"{name}={bucket}"
    hooks = hooks_of(loop)
    if key not in hooks.coverage:
        hooks.coverage[key] = draws_so_far()
        hooks.times[key] = loop.time()


def maximize(name: str, value: float) -> None:
    """Record `value` of the quantity `name`; a search prefers runs that set a new maximum."""
    _extreme("max " + name, value, largest=True)


def minimize(name: str, value: float) -> None:
    """Record `value` of the quantity `name`; a search prefers runs that set a new minimum."""
    _extreme("min " + name, value, largest=False)


def _extreme(key: str, value: float, *, largest: bool) -> None:
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise UsageError(f"{key.split()[0]}imize({key[4:]!r}, ...) needs a number, got {value!r}")
    hooks = hooks_of(loop)
    seen = hooks.extremes.get(key)
    if seen is None or (value > seen[0] if largest else value < seen[0]):
        hooks.extremes[key] = (float(value), draws_so_far())
        hooks.times[key] = loop.time()
