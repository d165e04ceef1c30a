"""The assertion oracles: `always`, `sometimes`, `reachable`, `unreachable`.

Inside a run every call is counted in the run's assertion catalog (per
message: kind, times evaluated, times true, where in the code), so a sweep can
say that a `sometimes` was never true in any seed, which means the test never
reached the state it was written for. A false `always` or a reached
`unreachable` fails the run at once with `InvariantViolation`, and the run
stays failed even if the code catches the exception.

Outside a simulation `always` is a plain check raising `AssertionError`; the
others return at once. Each costs one C call and a type check there.
"""

from __future__ import annotations

from typing import Any

from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import InvariantViolation
from seedbed.faults._hooks import _ATTR, _running_loop, caller_location, hooks_of


def _with_details(message: str, details: dict[str, Any]) -> str:
    if not details:
        return message
    shown = ", ".join(f"{key}={value!r}" for key, value in details.items())
    return f"{message} ({shown})"


def _record(loop: SeedbedLoop, kind: str, message: str, holds: bool) -> None:
    catalog = hooks_of(loop).catalog
    entry = catalog.get(message)
    if entry is None:
        entry = catalog[message] = [kind, 0, 0, caller_location(3)]
    entry[1] += 1
    if holds:
        entry[2] += 1


def _violation(loop: SeedbedLoop, text: str, message: str) -> InvariantViolation:
    """Fail the run (even if the caller swallows the raise) and return the error."""
    error = InvariantViolation(text)
    error.assertion = message
    error.location = caller_location(3)  # type: ignore[attr-defined]
    loop.trace.emit("assertion failed", text)
    loop.driver.fail(error)
    return error


def always(cond: object, message: str, **details: Any) -> None:
    """`cond` must be true every time this line runs; otherwise the run fails now.

    `details` (key=value) are shown in the failure. Outside a simulation this
    is a plain check that raises `AssertionError`.
    """
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        if not cond:
            raise AssertionError(_with_details(message, details))
        return
    # The hot path (a message seen before) inlines `hooks_of` and `_record`:
    # `always` runs once per checked step in many systems (issue 30).
    entry = (loop.__dict__.get(_ATTR) or hooks_of(loop)).catalog.get(message)
    if entry is not None:
        entry[1] += 1
        if cond:
            entry[2] += 1
            return
    else:
        holds = bool(cond)
        _record(loop, "always", message, holds)
        if holds:
            return
    raise _violation(loop, _with_details(message, details), message)


def sometimes(cond: object, message: str, **details: Any) -> None:
    """`cond` should be true at least once in some run: counted, never fails a run.

    A sweep that never sees it true has not explored the state it names.
    """
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return
    entry = (loop.__dict__.get(_ATTR) or hooks_of(loop)).catalog.get(message)
    if entry is None:
        _record(loop, "sometimes", message, bool(cond))
        return
    entry[1] += 1  # as `_record`, inlined like `always`'s
    if cond:
        entry[2] += 1


def reachable(message: str) -> None:
    """This line should run in some run: counted, never fails a run."""
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return
    _record(loop, "reachable", message, True)


def unreachable(message: str) -> None:
    """This line must never run in a simulation: reaching it fails the run now.

    Outside a simulation it does nothing (production code keeps it).
    """
    loop = _running_loop()
    if loop is None or type(loop) is not SeedbedLoop:
        return
    _record(loop, "unreachable", message, False)
    text = f"unreachable code was reached: {message}"
    raise _violation(loop, text, text)
