"""One failure, one report: folding the echoes a failed run leaves behind.

When a run fails, the tasks it leaves behind are collected later, and asyncio
reports each failed one nobody awaited ("Task exception was never
retrieved") with its whole traceback: often the same assertion, raised by
twenty handlers at once, printed twenty times after the failure's report. A
loop's `Echoes` decide which of its exception-handler reports to log: one
whose exception is the run's failure (its type and message, numbers masked)
is folded, and so is one that repeats a report already logged. Each folded
report is counted (`folded()`, process-wide), so a command line can say how
many it left out. Logging only: nothing here touches a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_NUMBER = re.compile(r"\d+")
_folded = 0  # reports folded in this process (see `folded`)
_muted = 0  # open `muted()` blocks: loops made inside log and count nothing


def _key(exception: BaseException | None, message: str) -> str:
    """What makes two reports the same: the message, the exception's type and
    text, numbers masked (worker 3's failure echoes worker 4's)."""
    if exception is None:
        return _NUMBER.sub("#", message)
    text = str(exception).split("\n", 1)[0]
    return f"{type(exception).__name__}: {_NUMBER.sub('#', text)}"


class Echoes:
    """One loop's record of what it logged and of its run's failure."""

    __slots__ = ("_failures", "_logged", "_muted")

    def __init__(self) -> None:
        self._failures: set[str] = set()
        self._logged: set[str] = set()
        self._muted = _muted > 0

    def failed(self, failure: BaseException) -> None:
        """The run failed with `failure` (and its cause): their echoes are folded."""
        for error in (failure, failure.__cause__):
            if error is not None:
                self._failures.add(_key(error, ""))

    def should_log(self, context: dict[str, Any]) -> bool:
        """Whether to log this exception-handler report (else it is counted)."""
        global _folded
        if self._muted:
            return False
        exception = context.get("exception")
        message = str(context.get("message") or "")
        key = _key(exception if isinstance(exception, BaseException) else None, message)
        if (exception is not None and key in self._failures) or key in self._logged:
            _folded += 1
            return False
        self._logged.add(key)
        return True


def folded() -> int:
    """How many exception-handler reports were folded in this process so far."""
    return _folded


@contextmanager
def muted() -> Iterator[None]:
    """Loops made inside report nothing and count nothing, ever: a run made a
    second time to read its events, whose echoes the first run's report covers."""
    global _muted
    _muted += 1
    try:
        yield
    finally:
        _muted -= 1
