"""check-history memory is bounded by design (issue 11, item 2).

Memory grows about linearly with the history (it grew with its square: a
bitset per operation and per memo entry), and `--max-memory` turns a check
that would pass the bound into an undecided verdict, exit 3.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

from seedbed.check import History, Outcome, linearizable, parse_history, register

REPO = Path(__file__).resolve().parents[2]


def _history_text(operations: int, processes: int = 4) -> str:
    """A linearizable register history: rounds of overlapping writes and reads,
    completing in an order a register allows."""
    lines: list[str] = []
    latest: int | None = None  # a register starts empty
    written = 0
    for start in range(0, operations, processes):
        ops = []
        for process in range(processes):
            if (start + process) % 3:
                written += 1
                ops.append((process, "write", written))
            else:
                ops.append((process, "read", None))
        lines += [
            json.dumps({"process": p, "type": "invoke", "f": f, "value": v}) for p, f, v in ops
        ]
        for process, f, v in ops:
            latest = v if f == "write" else latest
            result = v if f == "write" else latest
            lines.append(json.dumps({"process": process, "type": "ok", "f": f, "value": result}))
    return "\n".join(lines) + "\n"


def _peak_bytes(history: History) -> int:
    tracemalloc.start()
    try:
        verdict = linearizable(history, register(), witness=False)
        assert verdict.outcome is Outcome.LINEARIZABLE
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checker_memory_grows_about_linearly_with_the_history() -> None:
    small = parse_history(_history_text(3000), "small.jsonl")
    large = parse_history(_history_text(12000), "large.jsonl")
    ratio = _peak_bytes(large) / _peak_bytes(small)
    assert ratio < 6, f"4x the history took {ratio:.1f}x the memory (quadratic would be ~16x)"


def _check(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seedbed", "check-history", "--model=register", *options, str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


HANGS_AT_THE_LIMIT = (3, 13) <= sys.version_info < (3, 13, 8)  # CPython gh-134163


def test_max_memory_gives_an_undecided_verdict_and_exit_3(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(_history_text(20_000))  # about 2 MB: far more than 16 MB once parsed
    if HANGS_AT_THE_LIMIT:  # refused, not hung at 100% CPU
        refused = _check(path, "--max-memory", "4096")
        assert refused.returncode == 2 and "gh-134163" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        return
    refused = _check(path, "--max-memory", "1")
    assert refused.returncode == 2 and "already maps" in refused.stderr
    in_use = int(re.search(r"the (\d+) MB this process already maps", refused.stderr)[1])  # type: ignore[index]
    tight = _check(path, "--max-memory", str(in_use + 16))
    assert tight.returncode == 3, tight.stdout + tight.stderr
    assert "unknown" in tight.stdout and "Traceback" not in tight.stderr
    roomy = _check(path, "--max-memory", "4000")
    assert roomy.returncode == 0 and "linearizable" in roomy.stdout
