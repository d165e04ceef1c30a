"""Instruction counts of a whole command under callgrind: the repeatable view.

Wall-clock rates on this machine swing 30-50% between runs; callgrind counts
the instructions a process executes in user space, the same each time for the
same binary and inputs whatever else the machine is doing. Kernel work (the
system calls of real sockets) is not counted, which is itself worth knowing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator


def count_instructions(args: list[str]) -> int:
    """Instructions callgrind counts for `python ARGS...` in a fresh process."""
    return count_with_output(args)[0]


def count_with_output(args: list[str]) -> tuple[int, str]:
    """(instructions, stdout) of `python ARGS...` under callgrind in a fresh process."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, *args]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : ([\d,]+)", proc.stderr)
    if proc.returncode or not found:
        raise SystemExit(f"callgrind run of {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")), proc.stdout


def per_unit(script: str, small: int, large: int, units_per_round: int) -> tuple[float, float]:
    """(instructions, loop steps) per unit of `script --child N`, a workload of N rounds
    that prints its loop steps last: the difference of two sizes in fresh processes,
    so start-up and imports cancel out."""
    small_count, small_out = count_with_output([script, "--child", str(small)])
    large_count, large_out = count_with_output([script, "--child", str(large)])
    units = units_per_round * (large - small)
    steps = int(large_out.split()[-1]) - int(small_out.split()[-1])
    return (large_count - small_count) / units, steps / units


# -- counting one region of a process --------------------------------------------
#
# Counting a whole process under callgrind runs its start-up (interpreter,
# imports, seedbed's first scan of the loaded modules) at callgrind's speed,
# ~50 s a run here, and a difference of two sizes is needed to cancel it. A
# child that marks the region it measures with `region()` is run with
# instrumentation off until the mark (at native speed) and counted only
# inside it: a few seconds a run. The marks are callgrind's client requests,
# compiled once into a small library (needs gcc and valgrind's headers).

_HELPER_C = """#include <valgrind/callgrind.h>
void region_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void region_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_STOP_INSTRUMENTATION; }
"""
HELPER_VARIABLE = "SEEDBED_BENCH_CALLGRIND_REGION"


def region_helper() -> str:
    """The compiled marks library (built once per machine), or an explanation."""
    import hashlib
    import tempfile

    digest = hashlib.sha256(_HELPER_C.encode()).hexdigest()[:12]
    library = os.path.join(tempfile.gettempdir(), f"seedbed-bench-region-{digest}.so")
    if os.path.exists(library):
        return library
    if shutil.which("gcc") is None or not os.path.exists("/usr/include/valgrind/callgrind.h"):
        raise SystemExit("counting a region needs gcc and valgrind's headers (valgrind-dev)")
    source = library[:-3] + ".c"
    with open(source, "w", encoding="ascii") as out:
        out.write(_HELPER_C)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


def count_region(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """(instructions inside the child's `region()`, stdout) of `python ARGS...`."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           "--collect-atstart=no", "--instr-atstart=no", sys.executable, *args]  # fmt: skip
    full = {**os.environ, **(env or {}), "PYTHONHASHSEED": "0", HELPER_VARIABLE: region_helper()}
    proc = subprocess.run(cmd, env=full, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : ([\d,]+)", proc.stderr)
    if proc.returncode or not found:
        raise SystemExit(f"callgrind run of {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")), proc.stdout


def _marks() -> tuple[Callable[[], object], Callable[[], object]] | None:
    """The marks' two functions when counted by `count_region`, else None. Loaded at
    import: ctypes imported later would be a module new to the next simulated run,
    whose activation would then search the heap for copies inside the count."""
    path = os.environ.get(HELPER_VARIABLE)
    if not path:
        return None
    import ctypes

    library = ctypes.CDLL(path)
    return library.region_start, library.region_stop


_MARKS = _marks()


@contextlib.contextmanager
def region() -> Iterator[None]:
    """Marks what `count_region` counts; does nothing outside it."""
    if _MARKS is None:
        yield
        return
    start, stop = _MARKS
    start()
    try:
        yield
    finally:
        stop()
