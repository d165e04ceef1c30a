"""Nodes: start, crash, restart. What a crash keeps and what it never runs again.

A node is a name, a `main` and its incarnations. Starting one gives it a new
`NodeRef` and a fresh context (nothing inherited, like a new process) in
which `main()` runs. Crashing it:

- ends the incarnation's lane (`loop.driver.end_lane`): its `alive` flag
  flips, so the loop never runs its callbacks again (timers, wake-ups and
  network deliveries included, and the rest of a batch it is running);
- buries its tasks: out of asyncio's registry and the loop's, destroy warning
  silenced, kept referenced so the garbage collector cannot finalize them
  mid-run (which would run their `finally` blocks);
- tells the network (connections reset, ports gone) and the disk (unsynced
  writes lost or torn).

When the simulation ends, buried coroutines are closed inside their dead
incarnation's context, where every world operation fails, so their `finally`
blocks never send a message or write a file.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable
from typing import Any

from seedbed._core.identity import NodeRef, new_node_context
from seedbed.aio._driver import WorldDriver
from seedbed.aio._handles import SimTask
from seedbed.errors import UsageError

HOST, CLIENT = "host", "client"


class Node:
    """One named node and its current incarnation."""

    __slots__ = (
        "context", "disk", "incarnation", "isolate", "kind", "main", "name", "ref", "result",
        "task",
    )  # fmt: skip

    def __init__(
        self, name: str, kind: str, main: Callable[[], Any], disk: Any, result: Any,
        isolate: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.name = name
        self.isolate = isolate  # modules imported afresh at each start (`_process`)
        self.result = result  # a client's: the future of its first completed incarnation
        self.kind = kind
        self.main = main
        self.disk = disk
        self.incarnation = 0
        self.ref: NodeRef | None = None
        self.context: contextvars.Context | None = None
        self.task: asyncio.Task[Any] | None = None

    @property
    def up(self) -> bool:
        return self.ref is not None and self.ref.alive


class NodeTable:
    """The world's nodes, in the order they were added; a `NodeDirectory`."""

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        self.graveyard: list[tuple[SimTask, contextvars.Context]] = []

    def add(self, node: Node) -> None:
        if not isinstance(node.name, str) or not node.name:
            raise UsageError(f"a node needs a non-empty string name, got {node.name!r}")
        if node.name in self._nodes:
            raise UsageError(f"there is already a node named {node.name!r}; names are unique")
        if not callable(node.main):
            raise UsageError(
                f"node {node.name!r}: main must be an async callable, got {node.main!r}"
            )
        self._nodes[node.name] = node

    def get(self, name: str) -> Node:
        node = self._nodes.get(name)
        if node is None:
            known = ", ".join(self._nodes) or "none"
            raise UsageError(f"no node named {name!r} (nodes: {known})")
        return node

    def all(self) -> list[Node]:
        return list(self._nodes.values())

    # -- NodeDirectory ------------------------------------------------------

    def context_of(self, name: str) -> contextvars.Context:
        node = self._nodes[name]
        if not node.up or node.context is None:
            raise KeyError(f"node {name!r} is not running")
        return node.context

    def is_up(self, name: str) -> bool:
        node = self._nodes.get(name)
        return node is not None and node.up

    def ref_of(self, name: str) -> NodeRef:
        ref = self._nodes[name].ref
        if ref is None:
            raise KeyError(f"node {name!r} has not started")
        return ref

    def names(self) -> list[str]:
        return list(self._nodes)

    def __contains__(self, name: object) -> bool:
        """Whether `name` is a node: a lookup, where `names()` copies the table."""
        return name in self._nodes

    # -- lifecycle ----------------------------------------------------------

    def new_incarnation(self, node: Node) -> NodeRef:
        """A fresh ref and context for the node's next start (clock kept)."""
        previous = node.ref
        node.incarnation += 1
        ref = NodeRef(node.name, node.incarnation, disk=node.disk)
        if previous is not None:
            ref.wall_offset_ns, ref.wall_rate = previous.wall_offset_ns, previous.wall_rate
            ref.wall_reads = previous.wall_reads
        node.ref = ref
        node.context = new_node_context(ref)
        return ref

    def bury(self, driver: WorldDriver, node: Node) -> None:
        """Kill the node's running incarnation: no callback of it runs again."""
        ref, context = node.ref, node.context
        assert ref is not None and context is not None
        for task in driver.end_lane(ref):  # flips ref.alive; its tasks leave the registries
            self.graveyard.append((task, context))

    def close_graveyard(self) -> None:
        """Close buried coroutines where nothing they do can reach the world."""
        for task, context in self.graveyard:
            if task.done():  # ended by the rest of the callback its crash cut (a
                if not task.cancelled():  # blocking call's EIO): nobody's to hear of
                    task.exception()
                continue
            coro = task.get_coro()
            if coro is not None:
                with contextlib.suppress(BaseException):
                    context.run(coro.close)
        self.graveyard.clear()
