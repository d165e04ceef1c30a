"""What a held loop's runs leave alive, finalized at points seedbed owns (issue 42, item 6).

A stretch of running ends with a full collection (`_collect.Stretch`), so what
the run leaves alive is in CPython's oldest generation afterwards. A suite
drops it later: a future `run_until_complete` returned whose exception nobody
retrieved, held by the test past the loop's close. It then waited for
CPython's next full collection, ~93,000 allocations later (stock's, young,
goes within ~700), and its finalizer ran inside whatever code allocated
then: on 3.11 once inside pytest's `compile()`, which raised `SystemError:
AST constructor recursion depth mismatch`.

So on a loop other code holds (`new_event_loop`, the policy: a suite's),
each stretch notes its survivors (`watch`, with the frames under way) and
the task it runs (`watch_awaited`): the ids of all of them, weak references
to those that take one (those with a finalizer apart). When the loop is
closed, and before the next such loop is made (`at_boundary`), a full
collection runs if one with a finalizer is garbage: its finalizer runs
inside that seedbed call, before the next test's code, outside any run (no
trace can see it).

A full collection costs the whole heap (45 ms of CPU for the 70,000 objects
of a small library's pytest process here), and most boundaries find the
survivors still held (anyio's runner keeps its task past the close), so it
is not run blindly: `_garbage` asks the collector's own question of the
survivors only, whether anything outside them refers to them (reference
counts against the references among them); if not, they are a dead cycle.
Conservative by design: anything not among the survivors, or reached from
none of those that take a weak reference, counts as outside, so a cycle
through an object made after the run (or before it and already old) is
left to CPython's collector, as is everything once the next loop is made.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from types import FrameType
from typing import Any

# Survivors watched at most; past it (or with a finalizer on an object that takes
# no weak reference) the next boundary collects without asking (`_blind`).
LIMIT = 20_000
_made: set[int] = set()  # ids of the watched stretches' survivors
_handles: list[weakref.ref[Any]] = []  # those of them that take a weak reference
_watched: list[weakref.ref[Any]] = []  # and of those, the ones with a finalizer
_blind = [False]


def watch_awaited(awaited: asyncio.Future[Any] | None) -> None:
    """Note the future a stretch runs and its coroutine, made just before it:
    it freezes them, so they leave it old too, and a dead cycle can run
    through them (the loop's frame holds them; see `_note_stack`)."""
    if awaited is not None:
        coro = awaited.get_coro() if isinstance(awaited, asyncio.Task) else None
        _note([awaited] if coro is None else [awaited, coro])


def watch() -> None:
    """Note the stretch's survivors. Called right after its last collection, while
    the heap from before it is frozen: every object the collector lists is then
    one the stretch made and left alive (a pass like that collection's)."""
    _note(gc.get_objects())
    _note_stack()


def _note_stack() -> None:
    """The ids of the frames under way (the loop's, its caller's, the test
    runner's). An executing frame's object is untracked, so the collector does
    not list it; but a frame object that outlives its frame (a traceback's)
    links its caller's when it ends, and so on up: a future's exception can
    hold the whole chain, and the run's task in the loop's frame, in a cycle."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        _made.add(id(frame))
        frame = frame.f_back


def _note(objects: list[Any]) -> None:
    for obj in objects:
        _made.add(id(obj))
        finalized = hasattr(type(obj), "__del__")
        try:
            handle = weakref.ref(obj)
        except TypeError:  # a finalizer here cannot be watched: collect without asking
            _blind[0] = _blind[0] or finalized
            continue
        _handles.append(handle)
        if finalized:
            _watched.append(handle)
    if len(_made) > LIMIT:
        _forget()
        _blind[0] = True


def at_boundary(forget: bool, running: bool) -> bool:
    """A full collection if a watched survivor is garbage: at a held loop's close
    (`forget` false), or before a new one is made (`forget` true: from then on
    CPython's collector has them). Returns whether it collected (for tests).

    Skipped while a stretch runs anywhere (`running`: a run in another thread
    froze the heap and counts on its own collections) or inside a running loop.
    """
    if running or asyncio.events._get_running_loop() is not None:
        return False
    due = _blind[0] or _garbage()
    if due:
        gc.collect()
    if forget:
        _forget()
    elif due:
        _handles[:] = [ref for ref in _handles if ref() is not None]
        _watched[:] = [ref for ref in _watched if ref() is not None]
    return due


def _forget() -> None:
    _made.clear()
    _handles.clear()
    _watched.clear()
    _blind[0] = False


def _garbage() -> bool:
    """Whether a live watched survivor is reachable from nothing but survivors.

    The collector's test on a part of the heap: an object referred to more
    often than the part refers to it is held from outside, and so is what
    it reaches; what is left is a dead cycle. The part is what the live
    survivors that take a weak reference reach among all survivors (`_made`).
    """
    roots = set(_live(_watched))  # ids: the dict and its references go
    if not roots:
        return False
    part = _reach(_live(_handles), None)  # held by `part` alone from here
    outside = _held_from_outside(part, _refs_within(part))
    return bool(roots - _reach({key: part[key] for key in outside}, part).keys())


def _live(refs: list[weakref.ref[Any]]) -> dict[int, Any]:
    """The referents still alive, by id (a function of its own, so no local of
    the caller's keeps one of them)."""
    live = (ref() for ref in refs)
    return {id(obj): obj for obj in live if obj is not None}


def _reach(start: dict[int, Any], within: dict[int, Any] | None) -> dict[int, Any]:
    """What `start` reaches among the survivors (or among `within`), by id."""
    found: dict[int, Any] = dict(start)
    todo = list(start.values())
    while todo:
        for ref in gc.get_referents(todo.pop()):
            key = id(ref)
            inside = key in _made if within is None else key in within
            if inside and key not in found:
                found[key] = ref
                todo.append(ref)
    return found


def _refs_within(part: dict[int, Any]) -> dict[int, int]:
    """How many references each of the part's objects gets from the part."""
    counts = dict.fromkeys(part, 0)
    for obj in part.values():
        for ref in gc.get_referents(obj):
            key = id(ref)
            if key in counts and part[key] is ref:
                counts[key] += 1
    return counts


def _held_from_outside(part: dict[int, Any], within: dict[int, int]) -> list[int]:
    """The part's objects with more references than the part gives them.

    A sentinel held by `part` alone measures what this reading itself adds
    (the dict's reference, the call's argument), whatever the interpreter.
    """
    part[-1] = object()  # no object's id is negative
    counts = {key: sys.getrefcount(part[key]) for key in part}
    del part[-1]
    base = counts.pop(-1)
    return [key for key, count in counts.items() if count - base > within[key]]
