"""POS, partial-order sampling (Yuan, Yang and Gu, CAV 2018; Fray, OOPSLA 2025).

With `LoopConfig(strategy="pos")` every schedulable event (a lane's next
step; with `explore_tasks`, a task's next step) gets a random priority when
it becomes schedulable ("pos: priority of an event"), and at each choice
the highest-priority one runs. Once it ran, its actor's next event is a new
one and draws afresh; the others keep theirs. PCT keeps an actor's priority
for the whole run and needs the bug's depth and the run's length to place
its change points; POS has nothing to tune, and where uniform draws treat
each choice apart, a waiting event keeps its rank until it runs, so orders
that differ only in unrelated events are not sampled over and over.

Without knowing which events race, every event that ran is re-ranked, the
basic algorithm. In a batch of task steps that all run in one loop
iteration, each step ran in the batch before, so the batch comes out in a
uniform order, as under "random"; lanes (a world's nodes, a program's
threads), picked one step at a time, are where the two differ. Everything
else (timer ties, latencies, faults, checkpoints) is drawn as under
`strategy="random"`.
"""

from __future__ import annotations

from typing import Any

from seedbed.aio._pct import Pct


class Pos(Pct):
    """One run's POS state: the priority of each actor's pending event."""

    __slots__ = ()

    def __init__(self, stream: Any) -> None:
        super().__init__(stream, depth=1, horizon=1)  # depth 1: no change points

    def _priority_of(self, actor: Any) -> tuple[int, int]:
        found = self.priority.get(actor)
        if found is None:
            found = self.priority[actor] = (
                1,
                self.stream.below(1 << 30, "pos: priority of an event"),
            )
        return found

    def ran(self, actor: Any) -> None:
        """`actor`'s event ran: its next one draws its priority when it is looked at."""
        self.steps += 1
        self.priority.pop(actor, None)
