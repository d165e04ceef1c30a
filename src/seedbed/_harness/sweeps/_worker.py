"""A sweep worker: one process that runs seeds on request, one at a time.

The protocol is JSON Lines over the worker's own pipes. The parent starts it
with the sweep's settings as one JSON argument; the worker answers
`{"kind": "ready"}` once the target imports (or `{"kind": "usage",
"message": ...}` when it cannot), then reads `{"seed": N}` requests (with an
optional `"trace": PATH`) and answers each with the seed's record. A request
with `"recheck": FINGERPRINT` runs a seed again and answers `{"kind":
"recheck", "seed": N, "differences": [...]}` instead (see `_recheck`). End of
input means stop. The user's code may print: its stdout is sent to stderr
(the worker's log file), so it can never corrupt the protocol.

The loop (`serve`) is shared: a search worker (`search._worker`) runs it
with its own answer for a request, a plan instead of a seed.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import IO, Any

from seedbed._harness.sweeps._command import run_command
from seedbed._harness.sweeps._recheck import differences, fingerprint
from seedbed._harness.sweeps._record import build
from seedbed._harness.targets import resolve, run_seed
from seedbed.aio._collect import between_runs
from seedbed.errors import UsageError


def _protocol_streams() -> tuple[IO[bytes], IO[bytes]]:
    """Keep the pipes for the protocol; point the user's stdin/stdout elsewhere."""
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return requests, answers


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when the sweep dies, even mid-seed.

    Without it, a worker spinning in `while True: pass` would outlive a
    sweep killed with SIGKILL. Elsewhere the worker stops at the end of its
    current seed, when it reads the end of its input.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)  # the parent died before the request was in place


def _send(answers: IO[bytes], message: dict[str, Any]) -> None:
    answers.write(json.dumps(message, default=str).encode() + b"\n")
    answers.flush()


def _answer(target: Any, settings: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    if "recheck" in request:
        return _recheck(target, settings, request)
    return _record(target, settings, int(request["seed"]), request.get("trace"))


def _record(target: Any, settings: dict[str, Any], seed: int, trace: str | None) -> dict[str, Any]:
    replay = run_command(settings["runner"], settings["target"], seed, settings["options"])
    started = time.perf_counter()  # outside the run: the run patches the clocks only inside
    outcome = run_seed(target, seed, settings["options"], trace)
    record = build(seed, replay, outcome, time.perf_counter() - started)
    between_runs()  # a worker runs seed after seed: what they leave must go (see _collect)
    return record


def _recheck(target: Any, settings: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """Run a seed again, after others, and compare it with its first run (`_recheck`).

    A difference runs it once more with its trace kept, for the parent to find
    where it parts from a fresh process's run.
    """
    seed = int(request["seed"])
    again = _record(target, settings, seed, None)
    changed = differences(request["recheck"], fingerprint(again))
    answer = {"kind": "recheck", "seed": seed, "differences": changed,
              "wall_time": again["wall_time"], "trace": None}  # fmt: skip
    if changed and request.get("trace"):
        _record(target, settings, seed, request["trace"])
        answer["trace"] = request["trace"]
    return answer


# (the imported target, the settings, one request) -> its answer
Answer = Callable[[Any, dict[str, Any], dict[str, Any]], dict[str, Any]]


def serve(settings: dict[str, Any], answer: Answer = _answer,
          around: Callable[[], AbstractContextManager[Any]] = nullcontext) -> None:  # fmt: skip
    """Import the target, then answer requests until the input ends (inside `around()`)."""
    requests, answers = _protocol_streams()
    _die_with_parent(int(settings["parent"]))
    try:
        target = resolve(settings["target"])
    except UsageError as exc:
        _send(answers, {"kind": "usage", "message": str(exc)})
        return
    _send(answers, {"kind": "ready", "pid": os.getpid()})
    with around():
        for line in requests:
            try:
                record = answer(target, settings, json.loads(line))
            except UsageError as exc:
                _send(answers, {"kind": "usage", "message": str(exc)})
                return
            _send(answers, record)


def main(answer: Answer = _answer,
         around: Callable[[], AbstractContextManager[Any]] = nullcontext) -> None:  # fmt: skip
    """A worker process's entry point: its settings are its one argument."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers stop
    serve(json.loads(sys.argv[1]), answer, around)


if __name__ == "__main__":
    main()
