"""What a run did that its events do not show: its result and its own randomness.

The trace hash folds the simulator's events (time jumps, draws, tasks). A
program can still differ between two runs of one seed without changing any
of them: `as_completed` over a set of coroutines yields in address order
and the same tasks run, only the result differs. So a run also has

- a *result digest*: a stable digest of the value `main` returned, compared
  by `replay` and `check_determinism` beside the hash;
- an *unseed*: at the end of each stretch of running, the next draw the
  `random` module would give is folded into the hash (FoundationDB's unseed),
  so two runs that used the seeded randomness differently hash differently;
- a *seal* (`seal_run`): when the run ends, its step count, end time and the
  digest of its outcome (the result digest, or the failure's identity) are
  folded into the hash, so an equal hash is an equal ending too.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

from seedbed._core import Trace

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # default reprs name a memory address
_MAX_DEPTH = 20
REPR_LIMIT = 200  # characters of the result's repr kept in a trace for messages


def stable_repr(value: Any, depth: int = 0) -> str:
    """`repr(value)` made independent of the process it was computed in.

    Set elements are sorted by their own stable repr (a set of objects that
    hash by address iterates in memory order), and `at 0x...` addresses of
    default reprs are masked. Lists, tuples and dicts keep their order: that
    order is the program's doing.
    """
    if depth > _MAX_DEPTH:
        return "..."
    deeper = depth + 1
    kind = type(value)
    if kind is list:
        return "[" + ", ".join(stable_repr(item, deeper) for item in value) + "]"
    if kind is tuple:
        inner = ", ".join(stable_repr(item, deeper) for item in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if kind is dict:
        pairs = (f"{stable_repr(k, deeper)}: {stable_repr(v, deeper)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if kind is set or kind is frozenset:
        items = ", ".join(sorted(stable_repr(item, deeper) for item in value))
        return f"{kind.__name__}({{{items}}})"
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not lose the run's result
        text = f"<{kind.__qualname__} whose repr raised {type(exc).__name__}>"
    return _ADDRESS.sub(" at 0x?", text)


def result_digest(value: Any) -> str:
    """16 hex digits identifying the value a run returned (see `stable_repr`)."""
    text = stable_repr(value).encode("utf-8", "backslashreplace")
    return hashlib.blake2b(text, digest_size=8).hexdigest()


def short_repr(value: Any) -> str:
    text = stable_repr(value)
    return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 3] + "..."


def unseed_draw() -> int:
    """The next 64 bits the `random` module would draw, without drawing them.

    Drawn from a copy of its state: the program's generator is left as it was.
    Mersenne Twister output is the same on every CPython version.
    """
    copy = random.Random(0)
    copy.setstate(random.getstate())
    return copy.getrandbits(64)


def failure_identity(failure: BaseException) -> str:
    """What a failed run's hash records of its failure: the error's type and the
    first line of its message, addresses masked (the seed, step and replay lines
    a seedbed failure adds below it are not part of what happened)."""
    text = str(getattr(failure, "message", None) or failure)
    first = text.splitlines()[0] if text else ""
    return f"{type(failure).__qualname__}: {_ADDRESS.sub(' at 0x?', first)}"


def seal_run(
    trace: Trace, steps: int, now_ns: int, value: Any, failure: BaseException | None,
    digest: str | None = None,
) -> None:  # fmt: skip
    """Fold how the run ended into its trace (`Trace.seal`): steps, end time, outcome.

    `digest` is `result_digest(value)` when the caller has it already.
    """
    if failure is None:
        text = "value " + (digest if digest is not None else result_digest(value))
    else:
        text = "failure " + failure_identity(failure)
    word = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    trace.seal(steps, now_ns, word)
