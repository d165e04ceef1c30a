"""Explaining a failure: a smallest set of operations that cannot all hold.

Removing operations is the obvious way to shrink a non-linearizable history,
and for registers it gives useless answers: drop the writes behind a read and
the read alone is "unorderable". So the set S is judged with every operation
outside it *relaxed* instead: read-only ones are dropped, the others may take
effect anywhere within their interval or not at all, whatever they returned.
S then holds exactly the observations that conflict: a read and the write
that must have overwritten what it saw, a failed compare-and-set and the
read that contradicts it. Relaxing only ever makes ordering easier, which is
what makes the shrinking below sound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from seedbed.check._history import Operation
from seedbed.check._models import Model, is_read_only
from seedbed.check._search import SearchTimeout, search


def _relaxed(
    part: Sequence[Operation], model: Model, checked: set[int]
) -> tuple[list[Operation], frozenset[int]]:
    """``part`` with only the ``checked`` operations held to what was observed.

    Every other operation with a known outcome is forgotten down to its
    effect: read-only ones are dropped, the others may take effect within
    their interval or not at all, whatever they returned. Unknown-outcome
    operations stay as they are.
    """
    ops: list[Operation] = []
    soft = []
    for op in part:
        if not op.known or op.id in checked:
            ops.append(op)
        elif not is_read_only(model, op):
            ops.append(replace(op, status="info", result=None))
            soft.append(op.id)
    return ops, frozenset(soft)


def unorderable(
    part: list[Operation], model: Model, checked: list[Operation], deadline: float | None
) -> bool:
    """Whether ``checked`` cannot be ordered with the rest of ``part`` relaxed."""
    ops, soft = _relaxed(part, model, {op.id for op in checked})
    return not search(ops, model, deadline, soft).ok


def witness(
    part: list[Operation], model: Model, horizon: int, deadline: float
) -> tuple[list[Operation], bool]:
    """`_minimize` within the failing prefix first, over the whole part if need be.

    Relaxed operations can only make ordering easier, so a set that is
    orderable within the prefix stays orderable in the whole part: only the
    final set's unorderability needs confirming there.
    """
    head = _truncated(part, model, horizon, deadline)
    smallest, minimal = _minimize(head, model, deadline)
    if head is not part:
        try:
            confirmed = unorderable(part, model, smallest, deadline)
        except SearchTimeout:
            confirmed = False
        if not confirmed:
            smallest, minimal = _minimize(part, model, deadline)
    return smallest, minimal


def _minimize(part: list[Operation], model: Model, deadline: float) -> tuple[list[Operation], bool]:
    """A smallest set of operations whose observed outcomes cannot be ordered.

    Drops chunks of S first (halving their size), then single operations
    until a pass changes nothing; only sets proven unorderable are kept, so
    the result always is one. Returns S (in invocation order) and whether it
    is minimal: no operation can leave it (False if ``deadline`` cut it short).
    """
    current = [op for op in part if op.known]

    def holds(candidate: list[Operation]) -> bool:
        return unorderable(part, model, candidate, deadline)

    chunk = max(1, len(current) // 2)
    try:
        while True:
            changed = False
            i = 0
            while i < len(current):
                candidate = current[:i] + current[i + chunk :]
                if candidate and holds(candidate):
                    current = candidate
                    changed = True
                else:
                    i += chunk
            if chunk > 1:
                chunk = max(1, chunk // 2)
            elif not changed:
                return current, True
    except SearchTimeout:
        return current, False


def _truncated(
    part: list[Operation], model: Model, horizon: int, deadline: float | None
) -> list[Operation]:
    """The operations invoked before the search got stuck, if still unorderable.

    No path of the failed search reached further than ``horizon``, so
    operations invoked later never entered it; without them the search fails
    the same way (checked, not assumed), and shrinking starts much smaller.
    """
    head = [op for op in part if op.call < horizon]
    try:
        if len(head) < len(part) and not search(head, model, deadline).ok:
            return head
    except SearchTimeout:
        pass
    return part
