"""What interposition costs at the start and end of every run.

    PYTHONHASHSEED=0 PYTHONPATH=. python bench/interpose.py [--objects N]

Prints, in one process, the time of one activate/deactivate pair in the
common case (nothing imported and no new copy of a clock since the previous
run: the holders found last time are rebound, no heap walk), of one with a
heap walk (forced by a new holder, as after an import or a new closure over
`time.monotonic`), and of one seeded run of `examples/race.py` for scale,
with the number of objects the garbage collector tracks. `--objects` adds
that many small tracked objects first, to see how the walk grows with the
heap. Reports, never gates.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import time
from collections.abc import Callable

from examples import race

import seedbed
from seedbed.aio import _interpose
from seedbed.aio._host import RunHost


def _median_ms(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e3


def _activation(host: RunHost, new_holder: bool) -> Callable[[], None]:
    holders: list[Callable[[], float]] = []

    def once() -> None:
        if new_holder:  # a new closure over the real clock: its refcount changes
            clock = time.monotonic
            holders.append(lambda: clock())
        _interpose.activate(host)
        _interpose.deactivate()

    return once


def _race_run() -> None:
    with contextlib.suppress(seedbed.SimulationFailure):
        seedbed.run(race.main, seed=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=0, help="extra tracked objects")
    args = parser.parse_args()
    ballast = [[i] for i in range(args.objects)]
    loop = seedbed.new_event_loop(seed=1)
    host = RunHost(loop)  # type: ignore[arg-type]
    _race_run()  # warm: every module scanned once
    cached = _median_ms(_activation(host, new_holder=False), 200)
    walked = _median_ms(_activation(host, new_holder=True), 30)
    run = _median_ms(_race_run, 30)
    print(f"gc-tracked objects: {len(gc.get_objects()):,} (ballast {len(ballast):,})")
    print(f"activate+deactivate, nothing new:   {cached:8.3f} ms")
    print(f"activate+deactivate, heap walked:   {walked:8.3f} ms")
    print(f"one run of examples/race.py seed 1: {run:8.3f} ms (whole run, for scale)")
    print(f"walk / run: {walked / run:.2f}x   nothing-new / run: {cached / run:.3f}x")


if __name__ == "__main__":
    main()
