"""`seedbed check-determinism`: every seed twice, under different hash seeds.

The first pass runs the seeds in ascending order in workers with
`PYTHONHASHSEED=0`, the second in descending order in workers with another
hash seed. A seed whose trace hash or result differs depends on string-hash
order (sets of strings) or on what ran before it in the same process
(module-level state), or on entropy seedbed does not reach (C code). Each
divergent seed is then run alone in fresh processes, recording its events
(`_locate`), to name the first event that differs and its cause.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedbed._harness.sweeps._locate import first_difference, fresh_traces, own_entropy
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
    first_event: str  # the first differing event and what it means, or why there is none
    replay: str


def _run_pass(
    settings: Record, seeds: Iterable[int], jobs: int, folder: Path, hash_seed: str,
    seed_timeout: float,
) -> dict[int, Record]:  # fmt: skip
    found: dict[int, Record] = {}
    pool = WorkerPool(settings, jobs, folder / f"logs-{hash_seed}", seed_timeout, hash_seed)
    requests = [{"seed": seed} for seed in seeds]
    try:
        pool.run(requests, lambda record: found.__setitem__(int(record["seed"]), record))
    finally:
        pool.close()
    return found


def _differences(first: Record, second: Record) -> list[str]:
    return [
        f"{key}: {first.get(key)!r} vs {second.get(key)!r}"
        for key in COMPARED
        if first.get(key) != second.get(key)
    ]


def _locate(settings: Record, seed: int, folder: Path, seed_timeout: float) -> str:
    """Rerun one seed alone in fresh processes, traced, and say where and why it differs.

    Twice under PYTHONHASHSEED=0 and once under 1: two fresh runs under one
    hash seed that differ mean entropy outside the seed (C code's, when the
    first difference is a delivery's bytes); agreeing fresh runs that differ
    by hash seed mean string-hash order; agreeing ones, state between seeds.
    """
    runs = fresh_traces(settings, seed, folder, seed_timeout, ("0", "0", HASH_SEEDS[1]))
    if any(run is None for run in runs):
        return "no trace to compare: the seed crashed or timed out when run alone"
    first, again, other = (run for run in runs if run is not None)
    own = first_difference(first, again)
    if own is not None:
        shown = own.shown(("fresh process 1", "fresh process 2"))
        if own.delivery is not None:
            return f"{shown}\n  {own_entropy(own)}"
        return (
            f"{shown}\n  two fresh processes under one hash seed ran it differently: "
            "something outside the seed decides (a real clock, the heap, entropy seedbed "
            "does not reach)"
        )
    hashed = first_difference(first, other)
    if hashed is not None:
        a, b = HASH_SEEDS
        return hashed.shown((f"PYTHONHASHSEED={a}", f"PYTHONHASHSEED={b}"))
    return (
        "run alone in fresh processes, the seed ran the same under both hash seeds: "
        "its result depends on the seeds run before it in the same process "
        "(state leaking between seeds: kept at module level?)"
    )


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
