"""The collection checkers by name: set, queue, counter and unique ids.

Jepsen's set-full, total-queue, counter and unique-ids, each linear in the
history (see their modules). `check_collection` picks one by the name the
command line uses; every one returns a `CheckVerdict`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from seedbed.check._counter import check_counter
from seedbed.check._history import History
from seedbed.check._queue import check_queue
from seedbed.check._set import check_set
from seedbed.check._unique import check_unique_ids
from seedbed.check._verdict import CheckVerdict
from seedbed.errors import UsageError

CHECKERS: Final[dict[str, Callable[..., CheckVerdict]]] = {
    "set": check_set,
    "queue": check_queue,
    "counter": check_counter,
    "unique-ids": check_unique_ids,
}
COLLECTION_MODELS: Final = tuple(CHECKERS)


def check_collection(
    history: History, model: str, *, allow_empty: bool = False, **options: Any
) -> CheckVerdict:
    """Check ``history`` with the collection checker named ``model``.

    ``options`` go to that checker (``linearizable`` for a set, ``initial``
    for a counter).
    """
    checker = CHECKERS.get(model)
    if checker is None:
        raise UsageError(f"unknown collection model {model!r}; known: {', '.join(CHECKERS)}")
    return checker(history, allow_empty=allow_empty, **options)
