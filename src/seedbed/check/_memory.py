"""A hard memory bound for `check-history --max-memory`.

A search's memory grows with the history (about linearly), and a timeout
does not bound it: a large history can exhaust the machine long before the
clock runs out. The bound is the operating system's: the process's address
space is capped (`RLIMIT_AS`), so an allocation past it raises
`MemoryError`, which the command turns into an *unknown* verdict (exit 3)
for that file, then goes on with the next. Linux and other systems that
enforce `RLIMIT_AS`; elsewhere the option is refused. So is it on CPython
3.13.0-3.13.7: an allocation that fails while an exception unwinds makes
that interpreter retry it for ever (CPython gh-134163, fixed in 3.13.8),
and a check that hangs at 100% CPU is worse than one that is refused.
"""

from __future__ import annotations

import os
import sys

from seedbed.errors import UsageError

_MB = 1 << 20


def address_space_mb() -> int:
    """Megabytes of address space this process uses now (0 if unknown)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // _MB


def limit_memory(max_mb: int) -> None:
    """Cap this process's address space at `max_mb` megabytes."""
    try:
        import resource
    except ImportError:  # not a Unix
        raise UsageError("--max-memory needs a Unix system (RLIMIT_AS)") from None
    if (3, 13) <= sys.version_info < (3, 13, 8):
        raise UsageError(
            "--max-memory: this CPython can hang at the limit instead of raising MemoryError "
            "(CPython gh-134163, fixed in 3.13.8); use Python 3.11, 3.12 or 3.13.8+"
        )
    in_use = address_space_mb()
    if max_mb <= in_use:
        raise UsageError(
            f"--max-memory {max_mb} is below the {in_use} MB this process already "
            f"maps; give at least {in_use + 64}"
        )
    try:
        resource.setrlimit(resource.RLIMIT_AS, (max_mb * _MB, resource.RLIM_INFINITY))
    except (ValueError, OSError) as exc:
        raise UsageError(f"--max-memory: cannot limit memory here ({exc})") from None
