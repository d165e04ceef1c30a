"""A `PYTHONBREAKPOINT` hook for the --break-at tests: it records what a
debugger would show (the break's locals and the loop's state) in the JSON
file named by `SEEDBED_TEST_BREAK_OUT`, instead of opening pdb."""

from __future__ import annotations

import asyncio
import json
import os
import sys


def record() -> None:
    here = sys._getframe(1).f_locals
    loop = asyncio.get_running_loop()
    frame = here["frame"]
    facts = {
        "step": here["step"],
        "node": here["node"],
        "virtual_time": here["virtual_time"],
        "loop_steps": loop.steps,  # type: ignore[attr-defined]
        "loop_time": loop.time(),
        "task": here["task"].get_name() if here["task"] is not None else None,
        "frame_function": frame.f_code.co_name if frame is not None else None,
    }
    with open(os.environ["SEEDBED_TEST_BREAK_OUT"], "a") as out:
        out.write(json.dumps(facts) + "\n")
