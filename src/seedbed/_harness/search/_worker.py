"""A search worker: the sweep worker's loop, answering plans instead of seeds.

A request is `{"seed": N, "plan": {...}, "source": [[stream, reason, value],
...] | null}`; the answer is the plan's result (`_execute.execute`). The
`seed` lets the pool record a run whose worker died as a crash of that seed.
The protocol and its loop are the sweep worker's (`sweeps._worker.serve`).
"""

from __future__ import annotations

from typing import Any

from seedbed._harness.search._execute import choices_of, execute
from seedbed._harness.search._plan import Plan
from seedbed._harness.shrink._trial import asyncio_log_off
from seedbed._harness.sweeps._worker import main


def answer(target: Any, settings: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """Run one plan (as `execute`), in this process: Dask's workers call it too."""
    plan = Plan.from_json(request["plan"])
    rows = request.get("source")
    source = None if rows is None else choices_of(rows)
    result = execute(target, plan, source, settings["options"], settings.get("branches", ()))
    if request.get("recheck"):  # the same plan again, after others (see `_recheck`)
        result["kind"] = "recheck"
    return result


if __name__ == "__main__":
    main(answer, asyncio_log_off)
