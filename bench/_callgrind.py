"""Instruction counts of a whole command under callgrind: the repeatable view.

Wall-clock rates on this machine swing 30-50% between runs; callgrind counts
the instructions a process executes in user space, the same each time for the
same binary and inputs whatever else the machine is doing. Kernel work (the
system calls of real sockets) is not counted, which is itself worth knowing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys


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
