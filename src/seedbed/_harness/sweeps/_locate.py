"""Where two runs of one seed part ways, and why: the shared half of
`check-determinism` and a sweep's recheck.

Two recordings of a seed are compared event by event. The first differing
event is shown with its position (the step and virtual time of the marker or
time jump before it, see `seedbed._core.trace`). What it tells:

- Both runs made every choice alike and then delivered different bytes (a
  `deliver` event differing in its digest): something drew randomness that
  seedbed does not see. If two fresh processes, alone and under one hash
  seed, still differ, that is code outside seedbed's reach: C code such as
  OpenSSL generating a TLS key share.
- Fresh processes agree with each other: the run depends on what ran before
  it in its process (module-level state), or on the string-hash seed.

Rerunning a seed in fresh processes reuses the sweep's own worker (one
process per request, traced), so the runs are exactly what a sweep runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core import describe_event
from seedbed._core.trace import Event
from seedbed._core.tracefile import TraceFile, read_trace
from seedbed._harness.sweeps._pool import WorkerPool

Record = dict[str, Any]

# The ways out when C code draws its own entropy (docs/how-to/check-determinism.md).
WAYS_OUT = (
    "ways out: create the key material from Python's seeded randomness (os.urandom and "
    "random are the run's inside a simulation, e.g. X25519PrivateKey.from_private_bytes("
    "os.urandom(32))), patch the library's key generation in the test, or compare results "
    "only (docs/how-to/check-determinism.md, 'Entropy seedbed cannot reach')"
)


@dataclass(frozen=True)
class Difference:
    """The first event where two recordings of one seed differ."""

    index: int
    first: str  # the event (or "(end of trace)") in words
    second: str
    delivery: str | None  # "n1 -> n2 at step 41" when both are one delivery's digests

    def shown(self, labels: tuple[str, str]) -> str:
        what = (
            "every event the same, a different ending"
            if self.first.startswith(_ENDED)
            else f"first differing event {self.index}"
        )
        return f"{what}\n    {labels[0]}: {self.first}\n    {labels[1]}: {self.second}"


def _position(events: Sequence[Event], index: int) -> str:
    """'step S, t=...s' of the event at `index`: the last marker before it."""
    for event in reversed(events[:index]):
        if event[0] == "at" and len(event) == 3:
            return f"step {event[1]}, t={int(event[2]) / 1e9:.6f}s"
        if event[0] == "time" and len(event) == 3:
            return f"step {event[2]}, t={int(event[1]) / 1e9:.6f}s"
    return "step 0, t=0s"


def _words(events: Sequence[Event], index: int) -> str:
    if index >= len(events):
        return "(end of trace)"
    return f"{describe_event(events[index])} ({_position(events, index)})"


_ENDED = "the run ended at step"


def _ending(end: dict[str, Any]) -> str:
    how = end.get("failure") or f"returned {end.get('result_repr', end.get('result'))}"
    return f"{_ENDED} {end.get('steps')} and {how}"


def first_difference(first: TraceFile, second: TraceFile) -> Difference | None:
    """The first differing event of two recordings (or, when every event agrees,
    their endings: the hash seals those too), or None if all agree."""
    a, b = first.events, second.events
    index = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if tuple(x) != tuple(y)),
        min(len(a), len(b)),
    )
    if index == len(a) == len(b):
        if first.end.get("hash") == second.end.get("hash"):
            return None
        return Difference(index, _ending(first.end), _ending(second.end), None)
    delivery = None
    if index < min(len(a), len(b)):
        x, y = a[index], b[index]
        if x[0] == y[0] == "deliver" and x[1:3] == y[1:3]:
            delivery = f"{x[1]} -> {x[2]} at {_position(a, index)}"
    return Difference(index, _words(a, index), _words(b, index), delivery)


def own_entropy(difference: Difference) -> str:
    """The verdict when fresh processes alone still deliver different bytes."""
    return (
        "every choice was the same, yet the delivery "
        f"{difference.delivery} carried different bytes: code outside seedbed's reach "
        "(C code such as OpenSSL making a TLS key share) drew its own entropy; " + WAYS_OUT
    )


def fresh_traces(
    settings: Record, seed: int, folder: Path, seed_timeout: float, hash_seeds: Sequence[str]
) -> list[TraceFile | None]:
    """Run `seed` alone in one fresh process per entry of `hash_seeds`, traced.

    None for a run that left no trace (it crashed or timed out).
    """
    found = []
    for number, hash_seed in enumerate(hash_seeds):
        path = folder / f"seed-{seed}-fresh-{number}-hash-{hash_seed}.jsonl"
        pool = WorkerPool(settings, 1, folder / "logs", seed_timeout, hash_seed)
        try:
            pool.run([{"seed": seed, "trace": str(path)}], lambda record: None)
        finally:
            pool.close()
        found.append(read_trace(path) if path.exists() else None)
    return found


def in_worker(
    settings: Record, seed: int, folder: Path, seed_timeout: float, worker_trace: str | None
) -> str:
    """Why a seed a sweep's worker ran twice came out differently (see `_recheck`).

    Two fresh processes alone first: if they differ, the cause is not the
    seeds before it (entropy outside seedbed's reach, when a delivery's bytes
    differ first). If they agree, the worker's traced third run is compared
    with them: the first event where it parts from a fresh run.
    """
    fresh = fresh_traces(settings, seed, folder, seed_timeout, ("0", "0"))
    if fresh[0] is None or fresh[1] is None:
        return "no trace to compare: the seed crashed or timed out when run alone"
    own = first_difference(fresh[0], fresh[1])
    if own is not None:
        shown = own.shown(("fresh process 1", "fresh process 2"))
        if own.delivery is not None:
            return f"{shown}\n  {own_entropy(own)}"
        return f"{shown}\n  even two fresh processes ran it differently: not the seeds before it"
    leak = (
        "state leaking between seeds: the run depends on the seeds run before it in the "
        "same process (module-level state, a cache, a class attribute?)"
    )
    worker = read_trace(worker_trace) if worker_trace and Path(worker_trace).exists() else None
    if worker is None:
        return f"run alone in two fresh processes it ran the same; {leak}"
    where = first_difference(fresh[0], worker)
    if where is None:
        return f"run alone it ran the same, and so did a third run in the worker; {leak}"
    return f"{where.shown(('alone, fresh process', 'in the worker after others'))}\n  {leak}"
