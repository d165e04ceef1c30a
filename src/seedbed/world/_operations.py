"""Faults at operations: crash a node just before or just after its n-th fsync, write,
rename, send, receive or connect from now.

A crash at a drawn instant rarely lands inside the millisecond between a
vote's fsync and its reply; a crash tied to the operation does every time it
is armed. `Simulation.crash_at_operation` arms one `OperationCrash` on a
running node; the disk (`SimDisk.observer`) and the network (the
incarnation's `NodeRef.observer`) call it around each operation of its kind
while it is armed, and never otherwise: an unarmed node pays one attribute
test per operation.

"Before" means the operation takes no effect: a disk operation never
starts, a send is dropped, a received segment or datagram is never handed to
the program, a connect never sends its SYN. "After" means it took full
effect (a fsync's data is durable, a send is on the wire). Either way the
node is dead from then on: a disk operation never returns (its task waits
until the world closes it, as any crashed node's tasks do); a send, a
receive or a connect runs from a callback or a plain call, so the code
calling it runs on to its next `await`, but nothing it does reaches the
world (files fail with EIO, its transports are closed, its timers never
fire). The crash is the world's ordinary `crash`: the same unsynced-write
tearing, connection resets and buried tasks.
"""

from __future__ import annotations

from collections.abc import Callable

DISK_OPS = ("fsync", "write", "rename")
NET_OPS = ("send", "receive", "connect")
OPERATIONS = DISK_OPS + NET_OPS
BEFORE, AFTER = "before", "after"
PHASES = (BEFORE, AFTER)


class OperationCrash:
    """Crash one incarnation at its `count`-th `op` from now, `phase` it.

    Called as `observer(op, phase)`; returns True when it crashed the node
    (the caller then skips the operation, or, on a disk, never returns).
    """

    __slots__ = ("count", "crash", "fired", "op", "phase", "seen", "site")

    def __init__(self, op: str, phase: str, count: int, crash: Callable[[], None]) -> None:
        self.op = op
        self.phase = phase
        self.count = count
        self.seen = 0
        self.fired = False
        self.crash = crash  # the world's crash of this node, and the disarming

    def __call__(self, op: str, phase: str) -> bool:
        if op != self.op or phase != self.phase or self.fired:
            return False
        self.seen += 1
        if self.seen < self.count:
            return False
        self.fired = True
        self.crash()
        return True
