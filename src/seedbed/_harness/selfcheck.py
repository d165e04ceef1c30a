"""The self-check: one seed, several fresh processes, one trace hash.

Determinism inside one process proves little: module-level caches, import
order and hash randomization all differ between processes. So each run here
is a new interpreter started through the `seedbed run` command (which fixes
the string-hash seed), and their trace files are compared event by event when
the hashes differ. The value each run returned is compared too, by digest.

Fresh processes running one command allocate identically, so an order set by
memory addresses (a set of coroutines or plain futures) comes out the same in
each and would pass. So before its run, process k allocates and frees a
k-dependent pattern of objects: the runs see different heaps, as runs in a
long sweep do.
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
from seedbed._core.hashseed import fixed_env
from seedbed._core.naming import describe
from seedbed._core.tracefile import TraceFile, read_trace
from seedbed.errors import Nondeterminism, RunContext, UsageError

# The child is the `seedbed` command itself, started after a heap padding: a
# separate program, so the harness names it here instead of importing the CLI
# (which sits above it).
_CHILD = (
    "import sys; from seedbed._harness.selfcheck import pad_heap; pad_heap(int(sys.argv[1]), "
    "at_runs=True); "
    "sys.argv = ['seedbed', *sys.argv[2:]]; from seedbed.cli import main; main()"
)
_padding: list[object] = []  # kept alive for the child's whole run


def pad_heap(pad: int, *, at_runs: bool = False) -> None:
    """Allocate and free a `pad`-dependent pattern: this process's heap differs.

    With `at_runs`, again as each run begins: what a run's start allocates (its
    loop, interposition's bookkeeping) would otherwise fill the holes made at
    process start the same way in every process.
    """
    if at_runs:
        from seedbed.aio import _interpose

        activate = _interpose.activate

        def padded(host: Any) -> None:
            activate(host)
            pad_heap(pad)

        _interpose.activate = padded
    for size in range(0, 520, 8):  # every small-object size class
        batch = [bytes(size) for _ in range(pad * 3 + size % 5)]
        _padding.extend(batch[::2])  # keep every other one: holes, as a busy heap has


def _run_fresh(target: str, seed: int, trace: Path, extra: list[str], pad: int) -> dict[str, Any]:
    command = [sys.executable, "-c", _CHILD, str(pad), "run", target, "--seed", str(seed)]
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
    if len(first.events) == len(other.events):  # the same events: the endings differ
        return (
            "the same events ended differently\n"
            f"  recorded: {_ending(first.end)}\n  actual:   {_ending(other.end)}"
        )
    mine = describe_event(first.events[index]) if index < len(first.events) else "(end of trace)"
    theirs = describe_event(other.events[index]) if index < len(other.events) else "(end of trace)"
    return f"first divergent event {index}\n  recorded: {mine}\n  actual:   {theirs}"


def _ending(end: dict[str, Any]) -> str:
    how = end.get("failure") or "completed"
    return f"step {end.get('steps')}, t={end.get('virtual_time_ns')}ns, {how}"


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
    difference of trace hash or of result, raises `Nondeterminism` naming the
    first divergent event or the two results.
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
        outcomes = [_run_fresh(target, seed, path, extra, k) for k, path in enumerate(paths)]
        for index in range(1, runs):
            difference = _difference(outcomes[0], outcomes[index], paths[0], paths[index])
            if difference is not None:
                raise Nondeterminism(
                    f"seed {seed} gave {difference[0]} in process 1 but {difference[1]} in "
                    f"process {index + 1} (pid {os.getpid()} started both); {difference[2]}",
                    RunContext(seed, 0, 0, f"seedbed run {target} --seed {seed}"),
                )
    return str(outcomes[0]["trace_hash"])


def _difference(
    first: dict[str, Any], other: dict[str, Any], first_trace: Path, other_trace: Path
) -> tuple[str, str, str] | None:
    """(what run 1 gave, what the other gave, the detail), or None if they agree.

    The hash seals the outcome too, so two runs whose events all agree can
    still differ in hash: then it is their results (or where they ended).
    """
    same_result = first.get("result_digest") == other.get("result_digest")
    if first["trace_hash"] != other["trace_hash"]:
        mine, theirs = read_trace(first_trace), read_trace(other_trace)
        if mine.events != theirs.events or same_result:
            detail = _first_difference(mine, theirs)
            return f"trace hash {first['trace_hash']}", f"trace hash {other['trace_hash']}", detail
    if not same_result:
        detail = (
            "the same events returned different results\n"
            f"  recorded: {first.get('value')}\n  actual:   {other.get('value')}"
        )
        return (
            f"result {first.get('result_digest')}",
            f"result {other.get('result_digest')}",
            detail,
        )
    return None
