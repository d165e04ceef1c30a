"""Cycles in the dependency graph, by anomaly class (Adya, as Elle names them).

A cycle's class comes from its edges: only ``ww`` is G0; ``ww``/``wr`` with
a ``wr`` is G1c; exactly one ``rw`` is G-single; two or more ``rw`` none of
them adjacent is G-nonadjacent, otherwise G2-item. A cycle that needs a
``realtime`` edge takes the suffix ``-realtime``; one that needs a
``process`` edge (and no realtime one) ``-process``.

Existence is decided from strongly connected components (iterative
Tarjan, so 100,000 transactions never meet a recursion limit), the real-time
and process variants only inside the components of the widest graph:

- G0 exists iff the ``ww`` graph has a component of two or more;
- G1c iff some ``wr`` edge joins two transactions of one component of the
  ``ww``/``wr`` graph;
- G-single iff some ``rw`` edge a -> b has b reaching a in the ``ww``/``wr``
  graph: reachability between its components as bit sets (Python ints),
  one per component, up to ``MAX_REACH`` transactions per component; past
  that, each candidate edge is searched until the time budget;
- a component of the whole graph with none of those still has cycles,
  each with two or more ``rw`` edges: G-nonadjacent or G2-item, or, when
  the searches below cannot tell which in time, G2.

Those proofs need no search. The *shortest* cycle of each class is then
sought by breadth-first search from each candidate edge until the time
budget runs out; past it, the anomaly is still reported, proved from its
component. Cycles with two or more ``rw`` edges are found by searching a
product graph (transaction x how many ``rw`` edges / whether the last edge
was one); that search alone can run out of time undecided.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from seedbed.check._txn_infer import PROCESS, REALTIME, RW, WR, WW, Inference

BASE_CLASSES: Final = ("G0", "G1c", "G-single", "G-nonadjacent", "G2-item", "G2")
NON_RW_ORDER: Final = (WW, WR, PROCESS, REALTIME)
MAX_REACH: Final = 20_000  # component size up to which reachability is exact
MAX_TRIES: Final = 100  # candidate edges tried for a shorter cycle once one is found
Step = tuple[int, int, int]  # (from, to, kind)


def strongly_connected(
    nodes: Iterable[int], succ: Callable[[int], Iterable[int]]
) -> list[list[int]]:
    """Tarjan's strongly connected components, iteratively, sinks first, in a fixed order.

    Nodes are small non-negative integers (transaction ids), so the
    bookkeeping lives in lists rather than dicts: this runs on every history.
    """
    order = list(nodes)
    size = max(order, default=-1) + 1
    index = [-1] * size
    low = [0] * size
    on_stack = bytearray(size)
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root in order:
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work = [(root, iter(succ(root)))]
        while work:
            v, targets = work[-1]
            for w in targets:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work.append((w, iter(succ(w))))
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work and low[v] < low[work[-1][0]]:
                    low[work[-1][0]] = low[v]
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = 0
                        component.append(w)
                        if w == v:
                            break
                    components.append(component)
    return components


@dataclass(frozen=True)
class CycleResult:
    """What the search found for one class in one graph: a cycle, a proof, or neither.

    ``status`` is ``"found"`` (``steps`` is the shortest cycle found),
    ``"proved"`` (exists; ``steps`` holds the edge whose component proves it,
    or nothing), ``"none"`` (certainly absent) or ``"unknown"`` (the search
    ran out of time). ``component_size`` is the size of the component.
    """

    status: str
    steps: tuple[Step, ...] = ()
    component_size: int = 0


NONE: Final = CycleResult("none")


class _View:
    """Adjacency of one component restricted to a mask of edge kinds."""

    def __init__(self, inference: Inference, members: Sequence[int], mask: int) -> None:
        inside = set(members)
        self.mask = mask
        self.members = sorted(members)
        self.succ: dict[int, list[int]] = {
            v: sorted(w for w, k in inference.succ[v].items() if k & mask and w in inside)
            for v in self.members
        }

    def targets(self, v: int) -> list[int]:
        return self.succ[v]


def _bfs_path(view: _View, starts: Sequence[int], goal: int) -> list[int] | None:
    """Shortest path from one of ``starts`` to ``goal`` inside ``view``, or None."""
    parent: dict[int, int] = {s: s for s in starts}
    queue = deque(starts)
    while queue and goal not in parent:
        v = queue.popleft()
        for w in view.succ[v]:
            if w not in parent:
                parent[w] = v
                if w == goal:
                    break
                queue.append(w)
    if goal not in parent:
        return None
    path = [goal]
    while parent[path[-1]] != path[-1]:
        path.append(parent[path[-1]])
    return path[::-1]


def _pick(kinds: int, allowed: int) -> int:
    for kind in NON_RW_ORDER:
        if kinds & allowed & kind:
            return kind
    return RW


def classify(steps: Sequence[Step]) -> str:
    """The anomaly class of a cycle, with its -realtime/-process suffix."""
    kinds = [k for _, _, k in steps]
    rw = [k == RW for k in kinds]
    if not any(rw):
        base = "G1c" if WR in kinds else "G0"
    elif sum(rw) == 1:
        base = "G-single"
    elif any(rw[i] and rw[i - 1] for i in range(len(rw))):
        base = "G2-item"
    else:
        base = "G-nonadjacent"
    if REALTIME in kinds:
        return base + "-realtime"
    if PROCESS in kinds:
        return base + "-process"
    return base


class CycleSearch:
    """Every class's cycle in one graph variant (data edges plus ``extra`` kinds).

    Existence of G0, G1c and G-single is always decided; the search for a
    short cycle runs only for classes not in ``skip`` and stops at
    ``deadline`` (a `time.monotonic` instant).
    """

    def __init__(
        self, inference: Inference, extra: int, within: Sequence[int] | None = None
    ) -> None:
        self.inference = inference
        self.extra = extra
        self.deadline: float | None = None
        mask = WW | WR | RW | extra
        nodes = inference.nodes if within is None else within
        succ = inference.succ
        if mask == WW | WR | RW | PROCESS | REALTIME:  # every edge: no dict per transaction
            components = strongly_connected(nodes, inference.targets)
        else:
            inside = set(nodes)
            full = {v: [w for w, k in succ[v].items() if k & mask and w in inside] for v in nodes}
            components = strongly_connected(nodes, full.__getitem__)
        self.components = [sorted(c) for c in components if len(c) > 1]
        self.components.sort()

    def _late(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def members(self) -> list[int]:
        """Every transaction on some cycle of this graph, in id order."""
        return sorted(v for component in self.components for v in component)

    def run(
        self, skip: frozenset[str] = frozenset(), deadline: float | None = None
    ) -> dict[str, CycleResult]:
        """One result per base class: the best over all components.

        Shortest-cycle searches stop at ``deadline`` (a `time.monotonic`
        instant); what the components prove is reported regardless.
        """
        self.deadline = deadline
        results = dict.fromkeys(BASE_CLASSES, NONE)
        for component in self.components:
            for base, result in self._component(component, skip).items():
                if _better(result, results[base]):
                    results[base] = result
        return results

    def _component(self, members: list[int], skip: frozenset[str]) -> dict[str, CycleResult]:
        e = self.extra
        out = {"G0": self._closed(members, WW | e, "G0" in skip)}
        non_rw = _View(self.inference, members, WW | WR | e)
        out["G1c"] = self._through(members, non_rw, WR, "G1c" in skip)
        out["G-single"] = self._through(members, non_rw, RW, "G-single" in skip)
        whole = _View(self.inference, members, WW | WR | RW | e)
        only_multi = all(out[c].status == "none" for c in ("G0", "G1c", "G-single"))
        single = out["G-single"].status != "none"
        for base, adjacent in (("G-nonadjacent", False), ("G2-item", True)):
            if base in skip:
                out[base] = CycleResult("unknown")
            elif base == "G-nonadjacent" and single:
                out[base] = NONE  # not sought: G-single already rules out what it would
            else:
                proved = adjacent and only_multi and out["G-nonadjacent"].status == "none"
                out[base] = self._multi_rw(members, whole, adjacent, proved)
        # Cycles exist and each has two or more rw edges, but neither search
        # finished: G2 (a G-nonadjacent or a G2-item; which one is undecided).
        multi = (out["G-nonadjacent"].status, out["G2-item"].status)
        known = skip & {"G-nonadjacent", "G2-item", "G2"}  # found in a weaker graph
        undecided = only_multi and not known and all(s in ("none", "unknown") for s in multi)
        out["G2"] = CycleResult("proved", (), len(members)) if undecided else NONE
        return out

    def _closed(self, members: list[int], mask: int, exists_only: bool) -> CycleResult:
        view = _View(self.inference, members, mask)
        inner = [c for c in strongly_connected(view.members, view.targets) if len(c) > 1]
        if not inner:
            return NONE
        best: tuple[Step, ...] = ()
        for start in [] if exists_only else sorted(v for c in inner for v in c):
            if self._late() or len(best) == 2:
                break
            path = _bfs_path(view, view.succ[start], start)
            if path is not None and (not best or len(path) < len(best)):
                best = self._label([start, *path[:-1]], mask, None)
        return self._result(best, len(members), None)

    def _through(
        self, members: list[int], view: _View, kind: int, exists_only: bool
    ) -> CycleResult:
        """Cycles made of one ``kind`` edge a -> b and a path b -> a in ``view``."""
        reach = _Reach(view)
        candidates = [
            (a, b)
            for a in view.members
            for b, k in sorted(self.inference.succ[a].items())
            if k & kind and b in view.succ and (not reach.exact or reach.reaches(b, a))
        ]
        if not reach.exact:
            return self._search_only(members, view, kind, candidates)
        if not candidates:
            return NONE
        best: tuple[Step, ...] = ()
        for a, b in [] if exists_only else candidates:
            if self._late() or len(best) == 2:
                break
            path = _bfs_path(view, [b], a)
            if path is not None and (not best or len(path) < len(best)):
                best = self._label([a, *path[:-1]], view.mask, kind)
        return self._result(best, len(members), (*candidates[0], kind))

    def _search_only(
        self, members: list[int], view: _View, kind: int, candidates: list[tuple[int, int]]
    ) -> CycleResult:
        """Too big for exact reachability: search each candidate edge until the deadline."""
        for number, (a, b) in enumerate(candidates):
            if self._late():
                return CycleResult("unknown")
            path = _bfs_path(view, [b], a)
            if path is not None:
                return CycleResult(
                    "found", self._label([a, *path[:-1]], view.mask, kind), len(members)
                )
            if number + 1 == len(candidates):
                return NONE
        return NONE

    def _label(self, nodes: list[int], allowed: int, first: int | None) -> tuple[Step, ...]:
        """The cycle through ``nodes`` (closing back to the first), each edge's kind chosen."""
        steps = []
        for i, v in enumerate(nodes):
            w = nodes[(i + 1) % len(nodes)]
            kind = (
                first if i == 0 and first is not None else _pick(self.inference.succ[v][w], allowed)
            )
            steps.append((v, w, kind))
        return tuple(steps)

    def _multi_rw(
        self, members: list[int], view: _View, adjacent: bool, proved: bool
    ) -> CycleResult:
        """Cycles with two or more rw edges: two adjacent (``adjacent``) or none adjacent.

        ``proved``: the component is known to hold such a cycle (every cycle
        in it has two or more rw edges and none has them all apart).
        """
        rw_edges = [
            (a, b) for a in view.members for b in view.succ[a] if self.inference.succ[a][b] & RW
        ]
        best: tuple[Step, ...] = ()
        complete = True
        for tried, (a, b) in enumerate(rw_edges):
            if self._late() or (best and tried >= MAX_TRIES):
                complete = complete and bool(best)
                break
            walk = _product_bfs(self.inference, view, a, b, adjacent, WW | WR | self.extra)
            if walk is None:
                continue
            wanted = "G2-item" if adjacent else "G-nonadjacent"
            cycles = [c for c in _simple_cycles(walk) if classify(c).startswith(wanted)]
            if not cycles:
                complete = False  # a closed walk whose cycles are of other classes
            for steps in cycles:
                if not best or len(steps) < len(best):
                    best = steps
        if best:
            return CycleResult("found", best, len(members))
        if proved:
            return CycleResult("proved", (), len(members))
        return CycleResult("none" if complete else "unknown", (), len(members))

    def _result(self, best: tuple[Step, ...], size: int, proof: Step | None) -> CycleResult:
        if best:
            return CycleResult("found", best, size)
        return CycleResult("proved", (proof,) if proof else (), size)


def _simple_cycles(walk: tuple[Step, ...]) -> list[tuple[Step, ...]]:
    """The simple cycles a closed walk splits into at its repeated transactions."""
    pending, cycles = [walk], []
    while pending:
        steps = pending.pop()
        first: dict[int, int] = {}
        for i, (v, _, _) in enumerate(steps):
            if v in first:
                j = first[v]
                pending += [steps[j:i], steps[:j] + steps[i:]]
                break
            first[v] = i
        else:
            cycles.append(steps)
    return cycles


def _better(new: CycleResult, old: CycleResult) -> bool:
    rank = {"found": 3, "proved": 2, "unknown": 1, "none": 0}
    if rank[new.status] != rank[old.status]:
        return rank[new.status] > rank[old.status]
    return new.status == "found" and len(new.steps) < len(old.steps)


class _Reach:
    """Which transactions reach which inside one view: bit sets over its components.

    Tarjan emits components sinks first, so each component's set is its own
    bit or-ed with its successors', computed once. Past ``MAX_REACH`` members
    (a set per component would grow quadratic) nothing is claimed: ``exact``
    is False and every query answers False.
    """

    def __init__(self, view: _View) -> None:
        self.exact = len(view.members) <= MAX_REACH
        self.group: dict[int, int] = {}
        self.bits: list[int] = []
        if not self.exact:
            return
        for number, component in enumerate(strongly_connected(view.members, view.targets)):
            for v in component:
                self.group[v] = number
            bits = 1 << number
            for v in component:
                for w in view.succ[v]:
                    g = self.group[w]
                    if g != number:
                        bits |= self.bits[g]
            self.bits.append(bits)

    def reaches(self, a: int, b: int) -> bool:
        """Whether there is a path from ``a`` to ``b`` (of at least one edge if a == b)."""
        if not self.exact:
            return False
        return bool(self.bits[self.group[a]] >> self.group[b] & 1)


State = tuple[int, bool, bool]


def _product_bfs(
    inference: Inference, view: _View, a: int, b: int, adjacent: bool, non_rw: int
) -> tuple[Step, ...] | None:
    """A cycle a -rw-> b ... -> a with more rw edges: two adjacent, or none adjacent.

    A state is (transaction, whether the edge into it was rw, a flag): for
    ``adjacent``, whether two rw edges followed each other; otherwise,
    whether a second rw edge was taken (never right after another).
    Breadth-first over states, so the walk found is the shortest.
    """
    start: State = (b, True, False)
    parent: dict[State, State] = {start: start}
    queue = deque([start])
    goal: State | None = None
    while queue and goal is None:
        state = queue.popleft()
        v, last_rw, flag = state
        for w in view.succ[v]:
            kinds = inference.succ[v][w]
            moves: list[State] = []
            if kinds & non_rw:
                moves.append((w, False, flag))
            if kinds & RW and (adjacent or not last_rw):
                moves.append((w, True, flag or last_rw if adjacent else True))
            for nxt in moves:
                if nxt in parent:
                    continue
                parent[nxt] = state
                # Closing at a: the cycle's first edge (a -> b) is rw too.
                if w == a and (nxt[2] or nxt[1] if adjacent else nxt[2] and not nxt[1]):
                    goal = nxt
                    break
                queue.append(nxt)
            if goal is not None:
                break
    if goal is None:
        return None
    path = [goal]
    while path[-1] != start:
        path.append(parent[path[-1]])
    path.reverse()
    steps: list[Step] = [(a, b, RW)]
    for prev, cur in pairwise(path):
        kind = RW if cur[1] else _pick(inference.succ[prev[0]][cur[0]], non_rw)
        steps.append((prev[0], cur[0], kind))
    return tuple(steps)
