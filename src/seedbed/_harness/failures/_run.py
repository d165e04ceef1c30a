"""Running one saved failure in a sweep worker, exactly as its replay command does.

A seed record runs its seed under the run options it was saved with; a
choice file replays its draws (`seedbed run TARGET --choices FILE`). The
answer is the seed's results record, marked with the entry's file. A choice
file the program no longer draws the same way is refused in one line that
says how to clear it: it cannot be replayed, and passing it as a pass would
drop a failure nobody fixed.
"""

from __future__ import annotations

import time
from typing import Any

from seedbed._harness.shrink._replay import replay_choices
from seedbed._harness.sweeps._record import build
from seedbed._harness.targets import run_seed
from seedbed.aio._collect import between_runs
from seedbed.errors import UsageError


def run_entry(target: Any, settings: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """Run the saved failure `request["saved"]` describes; its results record."""
    saved = request["saved"]
    seed = int(request["seed"])
    started = time.perf_counter()  # outside the run: the run patches the clocks only inside
    if saved["choices"]:
        try:
            outcome = replay_choices(lambda s, **o: run_seed(target, s, o), saved["path"],
                                     settings["target"], None, {})  # fmt: skip
        except UsageError as exc:
            raise UsageError(f"saved failure: {exc}; clear it with: seedbed failures "
                             f"{settings['target']} --clear") from None  # fmt: skip
    else:
        outcome = run_seed(target, seed, saved["options"])
    record = build(seed, saved["replay"], outcome, time.perf_counter() - started)
    record["saved"] = saved["path"]
    between_runs()  # as after any seed a worker runs (see `seedbed.aio._collect`)
    return record
