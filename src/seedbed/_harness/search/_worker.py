"""A search worker: the sweep worker's protocol, answering plans instead of seeds.

A request is `{"seed": N, "plan": {...}, "source": [[stream, reason, value],
...] | null}`; the answer is the plan's result (`_execute.execute`). The
`seed` lets the pool record a run whose worker died as a crash of that seed.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

from seedbed._harness.search._execute import choices_of, execute
from seedbed._harness.search._plan import Plan
from seedbed._harness.shrink._trial import asyncio_log_off
from seedbed._harness.sweeps._worker import _die_with_parent, _protocol_streams, _send
from seedbed._harness.targets import resolve
from seedbed.errors import UsageError


def _answer(target: Any, settings: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    plan = Plan.from_json(request["plan"])
    rows = request.get("source")
    source = None if rows is None else choices_of(rows)
    return execute(target, plan, source, settings["options"])


def serve(settings: dict[str, Any]) -> None:
    """Import the target, then answer plan requests until the input ends."""
    requests, answers = _protocol_streams()
    _die_with_parent(int(settings["parent"]))
    try:
        target = resolve(settings["target"])
    except UsageError as exc:
        _send(answers, {"kind": "usage", "message": str(exc)})
        return
    _send(answers, {"kind": "ready"})
    with asyncio_log_off():
        for line in requests:
            try:
                result = _answer(target, settings, json.loads(line))
            except UsageError as exc:
                _send(answers, {"kind": "usage", "message": str(exc)})
                return
            _send(answers, result)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the search decides when workers stop
    serve(json.loads(sys.argv[1]))
