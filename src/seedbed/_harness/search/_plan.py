"""Deciding each run of a search: a fresh seed, or a branch of a corpus entry.

Run `index` draws every decision from its own stream, derived from the
explorer's seed and the index, and reads only the corpus as it stood when
its batch began. So the search is a function of (seed, number of runs):
the same on any number of workers, in one go or resumed.

The kinds of run (evidence for each mix: `bench/explore_search.py`, and the
summary's "runs/found something/failed" by kind):

- follow-ups: the first `MAX_FOLLOW_UPS` runs of a batch follow up the
  entries not yet followed, oldest first (moonpool forks at a state's first
  sight): a branch from the furthest point an entry reached what it found,
  a strike there, and a second branch;
- `fresh`: a new seed, drawn as a sweep would (a third of the other runs,
  and every run while the corpus is empty): an easy bug is found as a sweep
  finds it;
- `branch` (two in seven of the rest): replay an entry's first `prefix`
  draws, then draw afresh: half the time the prefix ends where the entry
  reached something it found first (a coverage point, a best value, a site
  firing), so the search climbs on from there; else anywhere;
- `refault` (two in seven): replay all of an entry's draws except one
  fault stream's (the nemesis's three times in four when it has one, else
  one of the nemesis, buggify and failpoints, the network's), drawn afresh
  with its waits 1 to 8 times shorter: the same state, other faults in it;
- `strike` (two in seven): replay all of an entry's draws, and its
  nemesis's too until 1 ms to 1 s after a moment it found something (a
  coverage point's or best value's virtual time); the nemesis's wait then
  pending is cut so a fault comes at that moment, and its later draws are
  fresh: the rare state the entry reached, and a fault in it. This is
  "changing one fault's time" aimed where it matters; scaling a random
  fault's time by 2**u (an earlier `shift`) found a failure about half as
  often as a fresh run, and was dropped;
- `flip` (one in seven): replay all of an entry's draws with one yes/no
  draw flipped (a dropped message, a failpoint or buggify site firing, or
  not): a step up a chain of lucky draws.

Which entry (outside the follow-ups): drawn by energy, the entry's weight
halving for every `HALF_LIFE` runs since it (or a run branched from it)
last found something, and multiplied by up to `RARE_BOOST` when what it
found is rare (reached by few runs: 16 / that many, at least 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from seedbed._core.choices import Choice, Value
from seedbed._core.entropy import Stream, derive_seed
from seedbed._core.trace import Trace

BATCH = 8  # plans decided together: fixed, so --jobs never changes the search
HALF_LIFE = 16  # runs
RARE_BOOST = 16  # an entry that found what one run reached weighs 16 times one common
_TOP_WEIGHT = 1 << 10
_SEED_BITS = 32
_FRESH_ONE_IN = 3
_KINDS = ("branch", "branch", "refault", "refault", "flip", "strike", "strike")
_FOLLOW_UPS = ("branch", "strike", "branch")  # what each new entry gets first
MAX_FOLLOW_UPS = 4  # of a batch's runs
_STRIKER = "nemesis"  # the stream whose next fault a strike brings forward
_STRIKE_LOG2 = (-10.0, 0.0)  # a strike comes 2**u seconds after the find: 1 ms to 1 s
FAULT_STREAMS = ("nemesis", "buggify", "net")  # where a run's faults are drawn


@dataclass(frozen=True)
class Plan:
    """One run of the search: its seed and, for a branch, what it replays."""

    index: int
    seed: int
    kind: str  # fresh | branch | refault | strike | flip
    parent: int | None = None  # the corpus entry branched from
    prefix: int = 0  # draws replayed before fresh draws
    redraw: str | None = None  # a stream drawn afresh from the start
    hotter: float | None = None  # its waits divided by this
    position: int | None = None  # the draw a mutation changes
    value: Value = None  # its new value
    strike: float | None = None  # virtual seconds: the redrawn stream's fault comes then
    follow: bool | None = None  # a follow-up of a new entry (see `follow_ups`)

    def to_json(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        return cls(**data)

    @property
    def redraw_streams(self) -> tuple[str, ...]:
        return () if self.redraw is None else (self.redraw,)

    def source(self, parent: list[Choice]) -> list[Choice]:
        """The choices this plan replays: the parent's, with its mutation applied."""
        if self.position is None:
            return parent
        edited = list(parent)
        old = edited[self.position]
        edited[self.position] = Choice(old.stream, old.reason, self.value, old.order)
        return edited


@dataclass(frozen=True)
class Candidate:
    """What plan-making needs to know of a corpus entry."""

    choices: Sequence[Choice]  # read from disk when first looked at (`_corpus`)
    last_found: int  # the run index at which it, or a branch of it, last found something
    at: list[int]  # where in its draws it reached what it found (if known)
    rarest: int = 1  # how many runs reached the rarest thing it found
    when: list[float] = field(default_factory=list)  # the virtual times it found them
    followed: int = 0  # how many of its follow-ups have run


def plan_stream(explorer_seed: int, index: int) -> Stream:
    name = f"explore plan {index}"
    return Stream(name, derive_seed(explorer_seed, name), Trace())


def make_plan(explorer_seed: int, index: int, corpus: list[Candidate], now: int) -> Plan:
    """Run `index`'s plan, given the corpus as it stood at run `now` (its batch's start)."""
    draw = plan_stream(explorer_seed, index)
    seed = draw.below(1 << _SEED_BITS, "explore: seed")
    due = follow_ups(corpus)
    if index - now < min(len(due), MAX_FOLLOW_UPS):
        parent, kind = due[index - now]
        return _follow_up(draw, index, seed, parent, kind, corpus[parent])
    if not corpus or draw.below(_FRESH_ONE_IN, "explore: fresh or branch") == 0:
        return Plan(index, seed, "fresh")
    parent = _pick(draw, corpus, now)
    choices = corpus[parent].choices
    kind = _KINDS[draw.below(len(_KINDS), "explore: kind")]
    if kind == "strike":
        when = corpus[parent].when
        if when and _can_strike(choices):
            moment = when[draw.below(len(when), "explore: strike which find")]
            return _strike(draw, index, seed, parent, choices, moment, follow=None)
    elif kind == "refault":
        present = [name for name in FAULT_STREAMS if any(c.stream == name for c in choices)]
        if present:
            world = present[0] == "nemesis" and draw.below(4, "explore: refault the nemesis") > 0
            redraw = "nemesis" if world else present[draw.below(len(present), "explore: refault")]
            hotter = 2.0 ** draw.uniform(0.0, 3.0, "explore: refault how much hotter")
            return Plan(index, seed, kind, parent, len(choices), redraw=redraw, hotter=hotter)
    elif kind != "branch":
        mutated = _mutation(draw, kind, choices)
        if mutated is not None:
            position, value = mutated
            return Plan(index, seed, kind, parent, len(choices), position=position, value=value)
    at = corpus[parent].at
    if at and draw.below(2, "explore: prefix where it found") == 0:
        prefix = at[draw.below(len(at), "explore: prefix which find")]
    else:
        prefix = draw.below(len(choices) + 1, "explore: prefix")
    return Plan(index, seed, "branch", parent, prefix)


def follow_ups(corpus: list[Candidate]) -> list[tuple[int, str]]:
    """The follow-ups not yet run, oldest entry first: (entry, kind).

    Every new entry is followed up at once, as moonpool forks at a state's
    first sight: a branch from the furthest point it reached what it found
    (fresh draws from that state on), then a strike there (a fault in that
    state), for as long as it has either. The first `MAX_FOLLOW_UPS` runs of
    each batch run them; the rest of the batch is drawn as usual."""
    due: list[tuple[int, str]] = []
    for number, candidate in enumerate(corpus):
        kinds = _FOLLOW_UPS if candidate.at else ()
        due.extend((number, kind) for kind in kinds[candidate.followed :])
        if len(due) >= MAX_FOLLOW_UPS:
            break
    return due


def _follow_up(draw: Stream, index: int, seed: int, parent: int, kind: str,
               candidate: Candidate) -> Plan:  # fmt: skip
    choices = candidate.choices
    if kind == "strike" and candidate.when and _can_strike(choices):
        return _strike(draw, index, seed, parent, choices, max(candidate.when), follow=True)
    return Plan(index, seed, "branch", parent, max(candidate.at), follow=True)


def _can_strike(choices: Sequence[Choice]) -> bool:
    return any(c.stream == _STRIKER for c in choices)


def _strike(draw: Stream, index: int, seed: int, parent: int, choices: Sequence[Choice],
            moment: float, follow: bool | None) -> Plan:  # fmt: skip
    later = 2.0 ** draw.uniform(_STRIKE_LOG2[0], _STRIKE_LOG2[1], "explore: strike how late")
    return Plan(index, seed, "strike", parent, len(choices), redraw=_STRIKER,
                strike=moment + later, follow=follow)  # fmt: skip


def energy(candidate: Candidate, now: int) -> int:
    """The entry's weight: halved for every HALF_LIFE runs without a finding,
    and up to RARE_BOOST times more for what few runs reached."""
    age = max(0, now - candidate.last_found)
    recency = max(1, _TOP_WEIGHT >> min(10, age // HALF_LIFE))
    return recency * max(1, RARE_BOOST // max(1, candidate.rarest))


def _pick(draw: Stream, corpus: list[Candidate], now: int) -> int:
    weights = [energy(candidate, now) for candidate in corpus]  # integers: an exact sum
    point = draw.below(sum(weights), "explore: entry")
    for index, weight in enumerate(weights):
        if point < weight:
            return index
        point -= weight
    return len(corpus) - 1  # not reached: the point is below the sum


def _mutation(draw: Stream, kind: str, choices: Sequence[Choice]) -> tuple[int, Value] | None:
    """A flip: one yes/no draw of the entry's, the other way."""
    places = [i for i, c in enumerate(choices) if c.value in (0, 1) and _is_int(c.value)]
    if not places:
        return None
    position = places[draw.below(len(places), f"explore: {kind} which")]
    return position, 1 - int(choices[position].value or 0)


def _is_int(value: Value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
