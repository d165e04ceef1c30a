"""Other threads: the only thing that could still wake an idle loop.

A simulation runs on one thread, so a seedbed loop that has nothing ready
and no timer pending can never run again, and that is a `Deadlock`, unless
a real thread holds the loop: a future completed through
`call_soon_threadsafe` from a worker started before the run, or anyio's
`BlockingPortal`, whose loop runs in a worker thread and waits for the main
thread's calls. Stock asyncio would sleep until that thread calls in; a
simulation cannot wait for real time, and whatever the thread does arrives
at a moment its timing decides. So such a run fails with a
`SimulationEscape` that names the threads, which is what the user must
change, instead of a deadlock report about their tasks.

Only loops made by `new_event_loop` or `EventLoopPolicy` are checked: the
loop of `seedbed.run` or of a `Simulation` is made inside the call, so no
thread can hold it, and a sweep's worker threads (Dask's) must not turn the
deadlocks of its seeds into escapes. Only non-daemon threads count: a daemon
thread is background machinery (a pool's helper, a watchdog), and naming it
would turn real deadlocks into escapes. The names come sorted, so the message
does not depend on the order the threads started in.
"""

from __future__ import annotations

import threading

_WHY = (
    "nothing in the run can wake the loop (no callback is ready, no timer is "
    "pending), and a real thread's timing is outside the simulation; start that "
    "thread inside the run (it runs as a simulated thread) or run its work as a task, or "
    "finish talking to the thread before the run starts"
)


def other_threads() -> list[str]:
    """The names of the live non-daemon threads other than the caller's, sorted."""
    me = threading.get_ident()
    return sorted(
        thread.name
        for thread in threading.enumerate()
        if thread.ident != me and not thread.daemon and thread.is_alive()
    )


def waiting_on_threads(names: list[str]) -> tuple[str, str]:
    """(call, instead) of the escape for an idle loop only `names` could wake."""
    listed = ", ".join(repr(name) for name in names)
    return f"waiting on another thread ({listed})", _WHY


def foreign_call(name: str) -> tuple[str, str]:
    """(call, instead) of the escape for `call_soon_threadsafe` from thread `name`
    while the loop runs: where the callback lands depends on the thread's timing."""
    return (
        f"loop.call_soon_threadsafe() from thread {name!r}",
        "the thread's timing would decide when the callback runs; run that "
        "thread's work as a task, or call in before the run starts",
    )
