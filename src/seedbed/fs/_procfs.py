"""`/proc/<pid>` of the simulated process: what `psutil.Process(os.getpid())` reads.

Inside a run `os.getpid()` answers a fake pid (`seedbed.aio._machine`), which
has no entry in the real `/proc`: `psutil.Process()` raised `NoSuchProcess`,
a failure no real OS produces (an MQTT broker's `$SYS` plugin could not
start), and `/proc/self` would be the real process's live state, different in
every run (so reading it is an escape). Here `open()` of a few files of the
simulated process's own directory, named by its pid or `self`, is answered
with a fixed view: a process that has just started, single-threaded,
sleeping, whose CPU times are zero and whose memory is a constant 24 MiB
resident. Its name and command line are the real interpreter's (facts fixed
for the life of the process). psutil's `Process()`, `name()`, `cmdline()`,
`status()`, `cpu_times()`, `cpu_percent()`, `memory_info()`,
`memory_full_info()`, `num_threads()` and `create_time()` (the machine's boot
time: `/proc/stat` is real) read these.

Every other file there (`fd/`, `io`, `maps`, `environ`...) and every other
way to it (`os.open`, a listing) stays what it was: the audit hook refuses
`/proc/self` and `/proc/<the real pid>` with a `SimulationEscape`; the fake
pid's other files are not found, as on a machine where that process has
only those files. Another node's pid is not found either: each node is its
own machine.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any

from seedbed.aio._host import InterposeHost
from seedbed.aio._machine import fake_pid

_PAGE_KIB = 4
_RSS_PAGES = 6144  # 24 MiB resident
_SIZE_PAGES = 25600  # 100 MiB of address space
_FILES = ("stat", "statm", "status", "smaps_rollup", "cmdline", "comm")


def _name() -> str:
    return os.path.basename(sys.executable or "python")[:15] or "python"


def _stat(pid: int) -> str:
    """`/proc/<pid>/stat`: 52 fields; times and counters zero, started at boot."""
    fields = [str(pid), f"({_name()})", "S", "1", str(pid), str(pid), "0", "-1", "4194304"]
    fields += ["0"] * 4  # minflt cminflt majflt cmajflt
    fields += ["0", "0", "0", "0"]  # utime stime cutime cstime (clock ticks)
    fields += ["20", "0", "1", "0", "0"]  # priority nice num_threads itrealvalue starttime
    fields += [str(_SIZE_PAGES * _PAGE_KIB * 1024), str(_RSS_PAGES)]  # vsize rss
    fields += ["0"] * (52 - len(fields))
    return " ".join(fields) + "\n"


def _status(pid: int) -> str:
    uid, gid = os.getuid(), os.getgid()
    return (
        f"Name:\t{_name()}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{pid}\nNgid:\t0\n"
        f"Pid:\t{pid}\nPPid:\t1\nTracerPid:\t0\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
        f"Gid:\t{gid}\t{gid}\t{gid}\t{gid}\nFDSize:\t64\nGroups:\t\n"
        f"VmRSS:\t{_RSS_PAGES * _PAGE_KIB} kB\nThreads:\t1\n"
        "voluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n"
    )


def _smaps_rollup() -> str:
    rss = _RSS_PAGES * _PAGE_KIB
    return (
        "00400000-7fffffffffff ---p 00000000 00:00 0  [rollup]\n"
        f"Rss:            {rss} kB\nPss:            {rss} kB\nPss_Anon:       {rss} kB\n"
        "Pss_File:       0 kB\nPss_Shmem:      0 kB\nShared_Clean:   0 kB\n"
        "Shared_Dirty:   0 kB\nPrivate_Clean:  0 kB\n"
        f"Private_Dirty:  {rss} kB\nReferenced:     {rss} kB\nAnonymous:      {rss} kB\n"
        "Swap:           0 kB\nSwapPss:        0 kB\nLocked:         0 kB\n"
    )


def content(pid: int, name: str) -> bytes:
    """The bytes of the simulated process's file `name` (one of `_FILES`)."""
    if name == "stat":
        text = _stat(pid)
    elif name == "statm":
        text = f"{_SIZE_PAGES} {_RSS_PAGES} 0 1 0 {_RSS_PAGES} 0\n"
    elif name == "status":
        text = _status(pid)
    elif name == "smaps_rollup":
        text = _smaps_rollup()
    elif name == "comm":
        text = _name() + "\n"
    else:  # cmdline: NUL-terminated arguments
        return b"".join(os.fsencode(arg) + b"\0" for arg in getattr(sys, "orig_argv", sys.argv))
    return text.encode()


def served(host: InterposeHost, file: Any) -> str | None:
    """The name of the simulated process's file `file` opens, else None."""
    if isinstance(file, bytes):
        file = os.fsdecode(file)
    elif isinstance(file, os.PathLike):
        file = os.fspath(file)
        file = os.fsdecode(file) if isinstance(file, bytes) else file
    if not isinstance(file, str) or not file.startswith("/proc/"):
        return None
    head, _, name = file[6:].partition("/")
    if name not in _FILES:
        return None
    if head != "self" and head != str(fake_pid(host.node_name())):
        return None
    return name


def open_view(host: InterposeHost, name: str, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    """A read-only file object over the view, as `open()` returns for a real one."""
    if any(flag in mode for flag in "wax+"):
        raise PermissionError(errno.EACCES, "Permission denied", f"/proc/self/{name}")
    data = content(fake_pid(host.node_name()), name)
    if "b" in mode:
        return io.BytesIO(data)
    encoding = kwargs.get("encoding") or (args[1] if len(args) > 1 else None) or "utf-8"
    errors = kwargs.get("errors") or (args[2] if len(args) > 2 else None) or "strict"
    return io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors)
