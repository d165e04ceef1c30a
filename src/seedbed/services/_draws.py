"""fakeredis's random choices (SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER, RANDOMKEY), labelled.

fakeredis draws them from the `random` module, which inside a run is the
run's one seeded generator, shared with the program's own code: a SPOP
would shift the program's draws, and the trace could not say what was
drawn for what. `label_draws` gives those fakeredis modules a `random` of
their own that, inside a simulated node, draws from the node's "services
redis NODE" stream with a reason naming the command's kind of choice, and
outside one (fakeredis used by other code of the process) is the `random`
module itself. It is set once, for the process, when a stand-in starts.
"""

from __future__ import annotations

import asyncio
import importlib
import random
from collections.abc import Sequence
from typing import Any, TypeVar

from seedbed._core.entropy import Stream
from seedbed._core.identity import current_node

T = TypeVar("T")
# The fakeredis modules that call random.sample / choices / randrange.
MODULES = (
    "fakeredis.model._expiring_members_set", "fakeredis.commands_mixins.hash_mixin",
    "fakeredis.commands_mixins.sortedset_mixin", "fakeredis._core._database",
)  # fmt: skip


def _stream() -> tuple[Stream, str] | None:
    """The running node's stand-in stream and label, or None outside a simulated node."""
    node = current_node()
    if node is None:
        return None
    try:
        loop: Any = asyncio.get_running_loop()
    except RuntimeError:
        return None
    entropy = getattr(loop, "entropy", None)
    if entropy is None:
        return None
    return entropy.stream(f"services redis {node}"), f"redis {node}"


class LabelledRandom:
    """The three calls fakeredis makes, drawn from the node's stream when in one."""

    def sample(self, population: Sequence[T], k: int) -> list[T]:
        found = _stream()
        if found is None:
            return random.sample(population, k)
        stream, label = found
        order = stream.permutation(len(population), f"{label}: random members, distinct")
        return [population[i] for i in order[:k]]

    def choices(self, population: Sequence[T], k: int = 1) -> list[T]:
        found = _stream()
        if found is None:
            return random.choices(population, k=k)
        stream, label = found
        n = len(population)
        return [population[stream.below(n, f"{label}: random member")] for _ in range(k)]

    def randrange(self, stop: int) -> int:
        found = _stream()
        if found is None:
            return random.randrange(stop)
        stream, label = found
        return stream.below(stop, f"{label}: random member or key")


_LABELLED = LabelledRandom()


def label_draws() -> None:
    """Give fakeredis's modules the labelled `random` (idempotent)."""
    for name in MODULES:
        module = importlib.import_module(name)
        if getattr(module, "random", None) is not _LABELLED:
            module.random = _LABELLED  # type: ignore[attr-defined]
