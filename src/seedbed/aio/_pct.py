"""PCT, probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).

With `LoopConfig(strategy="pct", pct_depth=d, pct_steps=k)` the loop's
scheduling choices stop being uniform draws and follow PCT:

- every actor (a node's lane in a world; with `explore_tasks`, also every
  task) gets a distinct random priority when first seen
  ("pct: priority of a new actor"), all above d;
- d - 1 change points are drawn among the first k scheduling steps
  ("pct: change point"); a step is one contested choice: a lane picked
  among two or more runnable ones, or one task step placed in a batch with
  others (an uncontested step orders nothing, and not counting it keeps k
  near the choices that matter and the loop's fast path untouched);
- at each choice the highest-priority candidate runs: the lane among the
  runnable ones, and the order of task steps ready together;
- when the step count reaches the i-th change point, the actor that ran it
  drops to priority d - i, below every initial priority.

Left None (the default), d and k are drawn for each run, so a sweep tries
every depth with nothing to tune: d uniformly in 1..`MAX_DEPTH` ("pct:
depth"), and each change point log-uniformly among the first 2^`OCTAVES`
steps (an octave, "pct: change point octave", then a step in it), so a
change lands in the first ten steps as often as between steps 1,000 and
2,000 whatever the program's length, where a fixed k spreads them evenly up
to k: too thin for a long program, past the end of a short one.

A bug of depth d (one needing d ordering constraints between actors) is
found by one run with probability at least 1 / (n * k^(d-1)) for n actors,
where uniform random scheduling can need exponentially many runs: a node
that must run twenty iterations in a row before another runs once is a
one-in-a-million order for coin flips and a one-in-two order for PCT.
Everything else (timer ties, latencies, faults, checkpoints) is still drawn
as under `strategy="random"`, the default.
"""

from __future__ import annotations

from bisect import insort
from typing import Any

from seedbed._core.contract import require

MAX_DEPTH = 4  # a drawn depth: 1..4 (most concurrency bugs need at most three orderings)
OCTAVES = 17  # drawn change points: among the first 2**17 contested steps


def _change_point(stream: Any, horizon: int | None) -> int:
    """A step number for a change point: uniform up to `horizon`, or log-uniform."""
    if horizon is not None:
        return 1 + int(stream.below(horizon, "pct: change point"))
    octave = int(stream.below(OCTAVES, "pct: change point octave"))
    return (1 << octave) + int(stream.below(1 << octave, "pct: change point in its octave"))


class Pct:
    """One run's PCT state: priorities by actor, change points, step count."""

    __slots__ = ("changes", "depth", "priority", "steps", "stream")

    def __init__(self, stream: Any, depth: int | None, horizon: int | None) -> None:
        self.stream = stream
        if depth is None:
            depth = 1 + int(stream.below(MAX_DEPTH, "pct: depth"))
        self.depth = depth
        self.priority: dict[Any, tuple[int, int]] = {}  # a lookup by actor, never an order
        changes: list[int] = []
        for _ in range(depth - 1):
            insort(changes, _change_point(stream, horizon))
        require(len(changes) == depth - 1, "PCT draws d - 1 change points", depth=depth)
        self.changes = changes  # step numbers, ascending (ties: one drop each)
        self.steps = 0

    def _priority_of(self, actor: Any) -> tuple[int, int]:
        found = self.priority.get(actor)
        if found is None:  # initial priorities rank above every lowered one (1, ...)
            found = self.priority[actor] = (
                1,
                self.stream.below(1 << 30, "pct: priority of a new actor"),
            )
        return found

    def ran(self, actor: Any) -> None:
        """Count one step by `actor`; at a change point, lower its priority."""
        self.steps += 1
        changes = self.changes
        while changes and changes[0] <= self.steps:
            require(changes[0] == self.steps, "PCT passes each change point at its step")
            changes.pop(0)
            self.priority[actor] = (0, len(changes))  # later change points rank lower

    def pick(self, candidates: list[Any], actor_of: Any) -> int:
        """The index of the candidate whose actor has the highest priority."""
        require(len(candidates) > 1, "PCT decides only contested choices")
        best = 0
        best_priority = self._priority_of(actor_of(candidates[0]))
        for index in range(1, len(candidates)):
            priority = self._priority_of(actor_of(candidates[index]))
            if priority > best_priority:
                best, best_priority = index, priority
        return best

    def order(self, actors: list[Any]) -> list[int]:
        """Indices of `actors` from highest priority to lowest (stable for one actor's steps)."""
        return sorted(range(len(actors)), key=lambda i: self._priority_of(actors[i]), reverse=True)
