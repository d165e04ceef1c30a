"""Synthetic sweep results files (contract 4) for the report's tests and benchmark.

The sweep that writes real ones is built elsewhere; this writes what the
contract says a sweep writes, with the awkward parts a report must survive:
markup and quotes in messages, non-ASCII, resumed headers, crashed and
timed-out seeds without a profile, and per-seed fault and assertion tallies.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

TARGET = "examples.bank:scenario"
HOSTILE = "<script>alert(\"x\")</script> & 'quotes' — ünïcode"
BUCKETS = [
    ("AssertionError", "balance went negative: {n}", "examples/bank.py:41"),
    ("KeyError", "'account-{n}'", "examples/bank.py:77"),
    ("LinearizabilityError", "read of key {n} saw a stale value " + HOSTILE, "examples/bank.py:90"),
]
FAULTS = ("crash", "partition", "clock_jump", "disk_fault")
ASSERTIONS = {
    "leader elected": "sometimes",
    "transfer retried after timeout": "sometimes",
    "two leaders in one term": "sometimes",  # never true: the catalog must flag it
    "balance never negative": "always",
    "recovery path taken": "reachable",
    "impossible state " + HOSTILE: "unreachable",
}


def header(first: int, seeds: int) -> dict[str, Any]:
    return {
        "kind": "header",
        "version": 1,
        "target": TARGET,
        "first": first,
        "seeds": seeds,
        "options": {"max_time": 60.0, "jobs": 2},
        "seedbed": "0.1.0",
        "python": "3.11.7",
        "started": "2026-11-30T20:00:00Z",
    }


def seed_record(seed: int, rng: random.Random) -> dict[str, Any]:
    """One seed: about 1 in 50 fails, 1 in 2,000 crashes, 1 in 5,000 times out."""
    roll = rng.random()
    status = "pass"
    if roll < 0.0002:
        status = "timeout"
    elif roll < 0.0007:
        status = "crash"
    elif roll < 0.02 + 0.0007 + (0.02 if 40_000 <= seed < 45_000 else 0.0):
        status = "fail"
    lost = status in ("crash", "timeout")
    record: dict[str, Any] = {
        "kind": "seed",
        "seed": seed,
        "status": status,
        "error_type": None,
        "message": None,
        "bucket": None,
        "location": None,
        "replay": f"seedbed run {TARGET} --seed {seed}",
        "trace_hash": None if lost else f"{rng.getrandbits(64):016x}",
        "steps": None if lost else rng.randint(500, 50_000),
        "virtual_time": None if lost else round(rng.uniform(5.0, 60.0), 3),
        "wall_time": round(rng.lognormvariate(-3.0, 0.6), 6),
        "profile": None if lost else _profile(rng),
        "faults": None if lost else _faults(rng),
        "assertions": None if lost else _assertions(rng),
        "result_digest": None,
    }
    if status == "fail":
        kind, template, location = BUCKETS[seed % len(BUCKETS)]
        number = rng.randint(1, 999)
        record.update(
            error_type=kind,
            message=template.format(n=number),
            bucket=f"{kind}: {template.format(n='<n>')}",
            location=location,
            traceback=f'Traceback (most recent call last):\n  File "{location}"\n{kind}: {number}',
        )
    elif status == "crash":
        record.update(error_type="WorkerCrash", message="worker died: signal 9",
                      bucket="crash: worker died: signal 9")  # fmt: skip
    elif status == "timeout":
        record.update(error_type="SeedTimeout", message="no result after 30 s",
                      bucket="timeout: no result after <n> s", wall_time=30.0)  # fmt: skip
    return record


def _profile(rng: random.Random) -> dict[str, Any]:
    return {f"{name}_per_second": round(rng.uniform(0.02, 0.3), 3) if rng.random() < 0.5 else 0.0
            for name in FAULTS}  # fmt: skip


def _faults(rng: random.Random) -> dict[str, Any]:
    faults = {}
    for name in FAULTS:
        injected = rng.randint(0, 4)
        faults[name] = {"injected": injected, "effective": rng.randint(0, injected)}
    return faults


def _assertions(rng: random.Random) -> dict[str, Any]:
    tallies = {}
    for number, (message, kind) in enumerate(ASSERTIONS.items()):
        evaluated = 0 if kind == "unreachable" else rng.randint(1, 20)
        true = evaluated
        if kind == "sometimes":
            true = 0 if message.startswith("two leaders") else rng.randint(0, evaluated)
        tallies[message] = {"kind": kind, "evaluated": evaluated, "true": true,
                            "location": f"examples/bank.py:{100 + number}"}  # fmt: skip
    return tallies


def write_results(path: Path, seeds: int, *, first: int = 0, resume_at: int | None = None) -> None:
    """Write `seeds` records starting at `first`, with a second header at `resume_at`."""
    rng = random.Random(f"results {first} {seeds}")
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header(first, seeds)) + "\n")
        for seed in range(first, first + seeds):
            if seed == resume_at:
                out.write(json.dumps(header(first, seeds)) + "\n")
            out.write(json.dumps(seed_record(seed, rng), ensure_ascii=False) + "\n")
