"""`seedbed check-determinism`: every seed twice, under different hash seeds.

The first pass runs the seeds in ascending order in workers with
`PYTHONHASHSEED=0`, the second in descending order in workers with another
hash seed. A seed whose trace hash or result differs depends on string-hash
order (sets of strings) or on what ran before it in the same process
(module-level state). Each divergent seed is then run once more, alone, in a
fresh process per hash seed, recording its events, to name the first event
that differs; when those two agree, the seed depended on its neighbours.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._core import describe_event
from seedbed._core.tracefile import TraceFile, read_trace
from seedbed._harness.sweeps._pool import WorkerPool
from seedbed.errors import UsageError

Record = dict[str, Any]
HASH_SEEDS = ("0", "1")
COMPARED = ("status", "error_type", "message", "trace_hash", "steps", "virtual_time",
            "result_digest")  # fmt: skip


@dataclass
class Divergence:
    """One seed that ran differently in the two passes, and where."""

    seed: int
    differences: list[str]  # "trace_hash: 1a2b... vs 3c4d..."
    first_event: str  # the first differing event, or why there is none
    replay: str


def _run_pass(
    settings: Record, seeds: Iterable[int], jobs: int, folder: Path, hash_seed: str,
    seed_timeout: float, traced: bool = False,
) -> dict[int, Record]:  # fmt: skip
    found: dict[int, Record] = {}
    pool = WorkerPool(settings, jobs, folder / f"logs-{hash_seed}", seed_timeout, hash_seed)
    requests = [
        {"seed": seed, **({"trace": str(_trace_path(folder, hash_seed, seed))} if traced else {})}
        for seed in seeds
    ]
    try:
        pool.run(requests, lambda record: found.__setitem__(int(record["seed"]), record))
    finally:
        pool.close()
    return found


def _trace_path(folder: Path, hash_seed: str, seed: int) -> Path:
    return folder / f"seed-{seed}-hash-{hash_seed}.jsonl"


def _differences(first: Record, second: Record) -> list[str]:
    return [
        f"{key}: {first.get(key)!r} vs {second.get(key)!r}"
        for key in COMPARED
        if first.get(key) != second.get(key)
    ]


def first_difference(first: TraceFile, second: TraceFile) -> str:
    """The first event where two recordings of one seed differ, both sides shown."""
    for index, (a, b) in enumerate(zip(first.events, second.events, strict=False)):
        if tuple(a) != tuple(b):
            return _shown(index, describe_event(a), describe_event(b))
    index = min(len(first.events), len(second.events))
    mine = describe_event(first.events[index]) if index < len(first.events) else "(end of trace)"
    theirs = (
        describe_event(second.events[index]) if index < len(second.events) else "(end of trace)"
    )
    return _shown(index, mine, theirs)


def _shown(index: int, first: str, second: str) -> str:
    a, b = HASH_SEEDS
    return (
        f"first differing event {index}\n    PYTHONHASHSEED={a}: {first}\n"
        f"    PYTHONHASHSEED={b}: {second}"
    )


def _locate(settings: Record, seed: int, folder: Path, seed_timeout: float) -> str:
    """Rerun one seed alone in a fresh process per hash seed and compare the events."""
    for hash_seed in HASH_SEEDS:
        _run_pass(settings, [seed], 1, folder, hash_seed, seed_timeout, traced=True)
    paths = [_trace_path(folder, hash_seed, seed) for hash_seed in HASH_SEEDS]
    if not all(path.exists() for path in paths):
        return "no trace to compare: the seed crashed or timed out when run alone"
    first, second = (read_trace(path) for path in paths)
    if first.end.get("hash") == second.end.get("hash") and first.events == second.events:
        return (
            "run alone in fresh processes, the seed ran the same under both hash seeds: "
            "its result depends on the seeds run before it in the same process "
            "(state kept at module level?)"
        )
    return first_difference(first, second)


def check_determinism(
    settings: Record, seeds: range, jobs: int, seed_timeout: float
) -> tuple[int, list[Divergence]]:
    """Run every seed in two passes; return how many were compared and the divergences."""
    with tempfile.TemporaryDirectory(prefix="seedbed-determinism-") as name:
        folder = Path(name)
        first = _run_pass(settings, seeds, jobs, folder, HASH_SEEDS[0], seed_timeout)
        second = _run_pass(settings, reversed(seeds), jobs, folder, HASH_SEEDS[1], seed_timeout)
        if set(first) != set(second):
            raise UsageError("check-determinism lost seeds between its passes")  # cannot happen
        divergences = []
        for seed in sorted(first):
            differences = _differences(first[seed], second[seed])
            if differences:
                where = _locate(settings, seed, folder, seed_timeout)
                divergences.append(
                    Divergence(seed, differences, where, str(first[seed].get("replay")))
                )
    return len(first), divergences


def report_lines(compared: int, divergences: list[Divergence], *, as_json: bool) -> list[str]:
    """Each divergence with its differences and first differing event, then the verdict."""
    a, b = HASH_SEEDS
    lines = []
    for divergence in divergences:
        lines.append(f"seed {divergence.seed} ran differently under PYTHONHASHSEED={a} and {b}:")
        lines += [f"  {difference}" for difference in divergence.differences]
        lines += [f"  {divergence.first_event}", f"  replay: {divergence.replay}"]
    if divergences:
        lines.append(f"{len(divergences)} of {compared} seeds diverged")
    else:
        lines.append(
            f"{compared} seeds, each the same in both runs (PYTHONHASHSEED={a} and {b}, "
            "fresh processes, seeds in opposite orders)"
        )
    if as_json:
        record = {"seeds": compared, "diverged": [d.seed for d in divergences],
                  "divergences": [dataclasses.asdict(d) for d in divergences]}  # fmt: skip
        lines.append(json.dumps(record, sort_keys=True))
    return lines
