"""A tiny world for network tests: a seedbed loop, named nodes and a SimNetwork.

`seedbed.Simulation` does this properly; the tests only need nodes whose
code runs in their own contexts, and a crash that kills a node's tasks.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

from seedbed._core.identity import NODE, NodeRef, new_node_context
from seedbed.aio.loop import SeedbedLoop
from seedbed.net import NetworkConfig, SimNetwork


class Directory:
    """The NodeDirectory the network asks about nodes."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.refs: dict[str, NodeRef] = {}
        self.contexts: dict[str, contextvars.Context] = {}
        for name in names:
            self.start(name)

    def start(self, name: str) -> NodeRef:
        previous = self.refs.get(name)
        ref = NodeRef(name, previous.incarnation + 1 if previous else 0)
        self.refs[name] = ref
        self.contexts[name] = new_node_context(ref)
        return ref

    def context_of(self, name: str) -> contextvars.Context:
        if not self.refs[name].alive:
            raise KeyError(name)
        return self.contexts[name]

    def is_up(self, name: str) -> bool:
        return name in self.refs and self.refs[name].alive

    def ref_of(self, name: str) -> NodeRef:
        return self.refs[name]

    def names(self) -> list[str]:
        return list(self.refs)

    def __contains__(self, name: object) -> bool:
        return name in self.refs


class World:
    """Loop + nodes + network. `spawn` runs a coroutine as a node."""

    def __init__(
        self,
        seed: int = 0,
        config: NetworkConfig | None = None,
        names: tuple[str, ...] = ("n1", "n2"),
    ) -> None:
        self.loop = SeedbedLoop(seed)
        self.nodes = Directory(names)
        self.net = SimNetwork(
            self.loop, self.loop.entropy.stream("net"), config or NetworkConfig(), self.nodes
        )
        self.loop.install_network(self.net)
        self.tasks: dict[str, list[asyncio.Task[Any]]] = {}
        self._create_task = self.loop.create_task
        self.loop.create_task = self._track  # type: ignore[method-assign]

    def _track(
        self, coro: Any, *, context: contextvars.Context | None = None, **kwargs: Any
    ) -> Any:
        task = self._create_task(coro, context=context, **kwargs)
        ref = context.get(NODE) if context is not None else NODE.get()
        if ref is not None:
            self.tasks.setdefault(ref.name, []).append(task)
        return task

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self.loop.create_task(coro, context=self.nodes.context_of(name))

    def run(self, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """Run `main()` outside any node (it usually spawns and awaits nodes)."""
        try:
            return self.loop.run_until_complete(main())
        finally:
            self._teardown()

    def _teardown(self) -> None:
        """Cancel what nodes left running (servers), as `asyncio.run` does."""
        pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            gathered = asyncio.gather(*pending, return_exceptions=True)
            self.loop.run_until_complete(gathered)

    def crash(self, name: str) -> None:
        self.nodes.refs[name].alive = False
        self.net.node_crashed(name)
        for task in self.tasks.pop(name, []):
            task.cancel()

    def restart(self, name: str) -> None:
        self.nodes.start(name)
        self.net.node_started(name)

    def now(self) -> float:
        return self.loop.time()
