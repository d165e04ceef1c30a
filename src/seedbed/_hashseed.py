"""One fixed string-hash seed for every process that runs simulations.

String hashing is randomized per process, and with it the iteration order of
sets of strings in user code. Two processes replay one seed identically only
if they share `PYTHONHASHSEED`; seedbed uses 0 (hash randomization off),
which the interpreter reports as `sys.flags.hash_randomization == 0`.
"""

from __future__ import annotations

import os
import sys
import warnings

from seedbed.errors import SeedbedWarning

HASH_SEED = "0"
_warned = False


def hash_seed_is_fixed() -> bool:
    """True when this interpreter hashes strings the way every seedbed process does."""
    return sys.flags.hash_randomization == 0


def fixed_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of `env` (default: this process's) with seedbed's hash seed set."""
    result = dict(os.environ if env is None else env)
    result["PYTHONHASHSEED"] = HASH_SEED
    return result


def warn_once_if_unfixed() -> None:
    """Warn, once per process, that set orders in user code may differ across processes."""
    global _warned
    if _warned or hash_seed_is_fixed():
        return
    _warned = True
    warnings.warn(
        "string hashing is randomized in this process (PYTHONHASHSEED is not 0): "
        "a run that iterates sets of strings may not replay in another process; "
        "run under PYTHONHASHSEED=0 or use the seedbed command",
        SeedbedWarning,
        stacklevel=_first_caller_outside_seedbed(),
    )


def _first_caller_outside_seedbed() -> int:
    """The stacklevel that points the warning at the user's line, not seedbed's."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level
