"""A CPU-time sampling profile that charges each sample to one layer of the system.

`setitimer(ITIMER_PROF)` interrupts the process every `interval` seconds of
CPU time it uses (user and system), and the handler looks at the Python frame
that was running. The sample goes to the layer of the innermost frame that
belongs to a known layer; frames of the rest of the standard library (`json`,
`zlib`'s callers, `heapq`, `random`) are charged to the code that called
them, so the store's JSON encoding counts as the store's cost and a seedbed
module's `heapq.heappush` as seedbed's.

Sampling, not tracing: a tracing profiler (cProfile) multiplies the cost of
every Python call and so distorts the share of code that makes many small
calls (the loop) against code that makes few large ones (the JSON encoder).
"""

from __future__ import annotations

import collections
import signal
import sysconfig
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEEDBED = str(ROOT / "src" / "seedbed") + "/"
STORE = str(ROOT / "examples" / "kvstore") + "/"
STDLIB = sysconfig.get_paths()["stdlib"] + "/"
ASYNCIO = STDLIB + "asyncio/"

# seedbed's modules by layer: the first prefix (relative to src/seedbed/) that matches wins.
SEEDBED_LAYERS = (
    ("_core/trace", "trace"),
    ("_core/tracefile", "trace"),
    ("aio/_digest", "trace"),
    ("_core/entropy", "entropy"),
    ("_core/choices", "entropy"),
    ("aio/_timefuncs", "entropy"),
    ("check/_assertions", "checks"),
    ("check/_history", "history"),
    ("check/", "checks"),
    ("scenario/", "checks"),
    ("aio/", "loop"),
    ("_core/clock", "loop"),
    ("_core/contract", "loop"),
    ("net/", "network"),
    ("fs/", "disk"),
    ("world/_disk_faults", "disk"),
    ("faults/", "buggify"),
    ("world/", "world"),
)

LAYERS = (
    "store",
    "loop",
    "network",
    "disk",
    "checks",
    "history",
    "trace",
    "entropy",
    "buggify",
    "world",
    "seedbed (other)",
    "stdlib asyncio",
    "other",
)
SEEDBED_NAMES = frozenset(
    {
        "loop",
        "network",
        "disk",
        "checks",
        "history",
        "trace",
        "entropy",
        "buggify",
        "world",
        "seedbed (other)",
    }
)


def _layer_of_file(filename: str, cache: dict[str, str | None]) -> str | None:
    """The layer a source file belongs to, or None for the rest of the stdlib."""
    found = cache.get(filename, "")
    if found != "":
        return found
    layer: str | None
    if filename.startswith(SEEDBED):
        relative = filename[len(SEEDBED) :]
        layer = next(
            (name for prefix, name in SEEDBED_LAYERS if relative.startswith(prefix)),
            "seedbed (other)",
        )
    elif filename.startswith(STORE):
        layer = "store"
    elif filename.startswith(ASYNCIO):
        layer = "stdlib asyncio"
    elif filename.startswith(STDLIB) or filename.startswith("<"):
        layer = None
    else:
        layer = "other"
    cache[filename] = layer
    return layer


class Sampler:
    """Samples per layer, collected while `running()` is active."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.counts: collections.Counter[str] = collections.Counter()
        self._files: dict[str, str | None] = {}

    def _sample(self, _signum: int, frame: FrameType | None) -> None:
        while frame is not None:
            layer = _layer_of_file(frame.f_code.co_filename, self._files)
            if layer is not None:
                self.counts[layer] += 1
                return
            frame = frame.f_back
        self.counts["other"] += 1

    @contextmanager
    def running(self) -> Iterator[None]:
        previous: Callable[..., Any] | int | None = signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0, 0)
            signal.signal(signal.SIGPROF, previous)

    def shares(self) -> list[tuple[str, float]]:
        """(layer, fraction of samples), in `LAYERS` order, for the layers seen."""
        total = sum(self.counts.values()) or 1
        return [(name, self.counts[name] / total) for name in LAYERS if self.counts[name]]

    def seedbed_share(self) -> float:
        total = sum(self.counts.values()) or 1
        return sum(n for name, n in self.counts.items() if name in SEEDBED_NAMES) / total


def call_counts(run: Callable[[], object]) -> collections.Counter[tuple[str, str]]:
    """Calls made while `run()` runs, by (layer, "Python" or "C"), from cProfile's counts.

    Counts, not times: they repeat exactly on any machine, and say how much
    interpreted work each layer asks for. cProfile counts a coroutine's every
    resumption as a call, so a frame in a task's await chain is counted each
    time the task wakes. A C function (`len`, `dict.get`,
    `heappush`) and a function of the rest of the standard library are charged
    to the layers of their callers, as the sampler charges them.
    """
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.runcall(run)
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    files: dict[str, str | None] = {}
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for (filename, _line, _name), (_prim, calls, _tt, _ct, callers) in stats.items():
        kind = "C" if filename == "~" else "Python"
        layer = None if filename == "~" else _layer_of_file(filename, files)
        if layer is not None:
            counts[layer, kind] += calls
            continue
        for (caller_file, _l, _n), caller_stats in callers.items():
            caller = None if caller_file == "~" else _layer_of_file(caller_file, files)
            counts[caller or "other", kind] += caller_stats[1]
    return counts
