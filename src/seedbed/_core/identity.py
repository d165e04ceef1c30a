"""Which node is running: the one fact every part of the world needs.

It sits in `_core`, below `seedbed.aio` (the debugger's breakpoint names the
node it stopped on), `seedbed.net`, `seedbed.fs` and `seedbed.world` (all
read it; the world uses the network, never the reverse).

Node identity travels with asyncio's contexts. Each incarnation of a node (a
start, or a restart after a crash) gets its own `contextvars.Context` holding
a `NodeRef`; its main task runs in that context, and everything it creates
inherits it: tasks, timers, future callbacks. Transports and other world
components that call into a node's code from outside must pass that node's
context explicitly (`NodeDirectory.context_of`).

A crash flips `NodeRef.alive` to False; anything still holding the old
incarnation's ref can see that it is dead.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol


class NodeRef:
    """One incarnation of one node."""

    __slots__ = (
        "alive", "disk", "files", "incarnation", "name", "observer", "wall_offset_ns", "wall_rate",
        "wall_reads",
    )  # fmt: skip

    def __init__(self, name: str, incarnation: int, disk: Any = None) -> None:
        self.name = name
        self.incarnation = incarnation
        self.alive = True
        self.disk = disk  # the node's simulated disk (kept across incarnations)
        # This incarnation's open files and working directory, made at its first
        # file call through the Python file API (`seedbed.fs._posix`): a process's own.
        self.files: Any = None
        self.wall_offset_ns = 0  # this node's wall clock: offset and rate vs virtual time
        self.wall_rate = 1.0
        self.wall_reads = 0  # times the node read its wall clock (all incarnations; unhashed)
        # Told of the network operations this incarnation performs, while a fault
        # waits for one (see `seedbed.world._operations`); None (no cost) otherwise.
        self.observer: Any = None

    def __repr__(self) -> str:
        state = "up" if self.alive else "crashed"
        return f"<node {self.name}#{self.incarnation} {state}>"


NODE: contextvars.ContextVar[NodeRef | None] = contextvars.ContextVar("seedbed.node", default=None)


def current_ref() -> NodeRef | None:
    """The incarnation whose code is running, or None outside any node."""
    return NODE.get()


def current_node() -> str | None:
    """The name of the node whose code is running (None outside a simulation)."""
    ref = NODE.get()
    return ref.name if ref is not None else None


def new_node_context(ref: NodeRef) -> contextvars.Context:
    """A fresh context for one incarnation: nothing inherited from the caller."""
    context = contextvars.Context()
    context.run(NODE.set, ref)
    return context


class NodeDirectory(Protocol):
    """What world components (network, disks) may ask of the world about nodes."""

    def context_of(self, name: str) -> contextvars.Context:
        """The context of the node's running incarnation (KeyError if down or unknown)."""

    def is_up(self, name: str) -> bool:
        """True while the node is running (not crashed, not yet restarted)."""

    def ref_of(self, name: str) -> NodeRef:
        """The node's current incarnation (KeyError if unknown)."""

    def names(self) -> list[str]:
        """Every node, in the order they were added."""

    def __contains__(self, name: object) -> bool:
        """Whether `name` is a node (a lookup: no copy of the names)."""
