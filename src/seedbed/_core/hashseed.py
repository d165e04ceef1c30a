"""One fixed string-hash seed for every process that runs simulations.

String hashing is randomized per process, and with it the iteration order of
sets of strings in user code. Two processes replay one seed identically only
if they share `PYTHONHASHSEED`; seedbed uses 0 (hash randomization off),
which the interpreter reports as `sys.flags.hash_randomization == 0`.

A process with randomized hashing is told so once, through the `seedbed`
logger, not the warnings machinery: under `-W error` or pytest's
`filterwarnings = error` a warning would become an exception raised out of the
first run before its coroutine starts, failing a suite for a notice.
"""

from __future__ import annotations

import logging
import os
import sys

HASH_SEED = "0"
_warned = False
_logger = logging.getLogger("seedbed")


def hash_seed_is_fixed() -> bool:
    """True when this interpreter hashes strings the way every seedbed process does."""
    return sys.flags.hash_randomization == 0


def fixed_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of `env` (default: this process's) with seedbed's hash seed set."""
    result = dict(os.environ if env is None else env)
    result["PYTHONHASHSEED"] = HASH_SEED
    return result


def notice() -> str | None:
    """The one-line notice about this process's string hashing, None if it is fixed.

    For reports that want to show it (a test session's header, say).
    """
    if hash_seed_is_fixed():
        return None
    return (
        "seedbed: string hashing is randomized in this process (PYTHONHASHSEED is not 0): "
        "a run that iterates sets of strings may not replay in another process; "
        "run under PYTHONHASHSEED=0 or use the seedbed command"
    )


def warn_once_if_unfixed() -> None:
    """Log the notice, once per process, at the line of the first run. Never raises."""
    global _warned
    if _warned:
        return
    _warned = True
    message = notice()
    if message is not None:
        _logger.warning("%s (first run at %s)", message, _first_caller_outside_seedbed())


def _first_caller_outside_seedbed() -> str:
    """file:line of the user's code that started the run, not seedbed's."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # src/seedbed
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package + os.sep):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"
