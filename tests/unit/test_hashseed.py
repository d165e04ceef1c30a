"""The notice about randomized string hashing is given once and never fails a run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The first async test of a suite, as pytest-asyncio or unittest would start it.
PROGRAM = """\
import asyncio, seedbed
async def main(): return 1
loop = seedbed.new_event_loop(seed=1)
print(loop.run_until_complete(main()))
loop.close()
print(seedbed.run(main, seed=2).value)
"""


def _run(hash_seed: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", PROGRAM], cwd=REPO, capture_output=True, text=True,
        check=False, env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )  # fmt: skip


def test_under_warnings_as_errors_randomized_hashing_is_a_notice_not_a_failure() -> None:
    done = _run("random", "-W", "error")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1"]
    assert done.stderr.count("string hashing is randomized") == 1
    assert "(first run at <string>:4)" in done.stderr  # the user's line, not seedbed's


def test_no_notice_when_the_hash_seed_is_fixed() -> None:
    done = _run("0", "-W", "error")
    assert done.returncode == 0, done.stderr
    assert "hashing" not in done.stderr
