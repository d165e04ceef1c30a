"""The self-check: one seed, several fresh processes, one trace hash.

Determinism inside one process proves little: module-level caches, import
order and hash randomization all differ between processes. So each run here
is a new interpreter started through the `seedbed run` command (which fixes
the string-hash seed), and their trace files are compared event by event when
the hashes differ.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seedbed._core import describe_event
from seedbed._core.tracefile import TraceFile, read_trace
from seedbed._hashseed import fixed_env
from seedbed._target import describe
from seedbed.errors import Nondeterminism, RunContext, UsageError


def _run_fresh(target: str, seed: int, trace: Path, extra: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "seedbed", "run", target, "--seed", str(seed)]
    command += ["--trace", str(trace), "--json", *extra]
    done = subprocess.run(command, capture_output=True, text=True, env=fixed_env(), check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 2 or not lines:
        detail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"check_determinism could not run {target}: {detail[0]}")
    outcome: dict[str, Any] = json.loads(lines[-1])
    return outcome


def _first_difference(first: TraceFile, other: TraceFile) -> str:
    for index, (a, b) in enumerate(zip(first.events, other.events, strict=False)):
        if tuple(a) != tuple(b):
            return (
                f"first divergent event {index}\n"
                f"  recorded: {describe_event(a)}\n  actual:   {describe_event(b)}"
            )
    index = min(len(first.events), len(other.events))
    mine = describe_event(first.events[index]) if index < len(first.events) else "(end of trace)"
    theirs = describe_event(other.events[index]) if index < len(other.events) else "(end of trace)"
    return f"first divergent event {index}\n  recorded: {mine}\n  actual:   {theirs}"


def check_determinism(
    main: Callable[[], Any],
    seed: int,
    runs: int = 2,
    *,
    max_steps: int | None = None,
    max_time: float | None = None,
) -> str:
    """Run `main` under `seed` in `runs` fresh processes; return the common trace hash.

    `main` must be importable by name (a module-level async function). On a
    difference, raises `Nondeterminism` naming the first divergent event.
    """
    target = describe(main)
    if target is None:
        raise UsageError(f"{main!r} cannot be imported by name; define it at module level")
    if runs < 2:
        raise UsageError(f"runs must be at least 2 to compare anything, got {runs}")
    extra: list[str] = []
    if max_steps is not None:
        extra += ["--max-steps", str(max_steps)]
    if max_time is not None:
        extra += ["--max-time", str(max_time)]
    with tempfile.TemporaryDirectory(prefix="seedbed-selfcheck-") as folder:
        paths = [Path(folder) / f"run{i}.jsonl" for i in range(runs)]
        outcomes = [_run_fresh(target, seed, path, extra) for path in paths]
        hashes = [outcome["trace_hash"] for outcome in outcomes]
        for index in range(1, runs):
            if hashes[index] != hashes[0]:
                detail = _first_difference(read_trace(paths[0]), read_trace(paths[index]))
                replay = f"seedbed run {target} --seed {seed}"
                raise Nondeterminism(
                    f"seed {seed} gave trace hash {hashes[0]} in process 1 but "
                    f"{hashes[index]} in process {index + 1} (pid {os.getpid()} started both); "
                    f"{detail}",
                    RunContext(seed, 0, 0, replay),
                )
    return str(hashes[0])
