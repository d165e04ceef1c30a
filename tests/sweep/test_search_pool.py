"""`seedbed explore --jobs N` (issue 26): a worker pool finds what one process finds.

Plans are made a batch at a time and folded in run order, so the number of
workers (and the order their answers arrive in) never changes the search.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seedbed._harness.search import ExploreSpec, explore

RETRIES = "examples.rare:retries"


def _lines(out: Path) -> list[dict[str, Any]]:
    """The log's lines, folder names and the stop line's wall-clock seconds taken out."""
    lines = []
    for row in (out / "explore.jsonl").read_text().splitlines():
        line = json.loads(row)
        line.pop("seconds", None)
        for key in ("entry", "failure_file", "replay"):
            if isinstance(line.get(key), str):
                line[key] = line[key].replace(str(out), "OUT")
        lines.append(line)
    return lines


def test_two_workers_make_the_search_one_process_makes(tmp_path: Path) -> None:
    here = explore(ExploreSpec(RETRIES, tmp_path / "here", seed=7, runs=20))
    pooled = explore(ExploreSpec(RETRIES, tmp_path / "pool", seed=7, runs=20, jobs=2))
    assert pooled.state.runs == here.state.runs == 20
    assert _lines(tmp_path / "pool") == _lines(tmp_path / "here")
    assert [e.file.replace(str(tmp_path / "pool"), "") for e in pooled.state.corpus] == [
        e.file.replace(str(tmp_path / "here"), "") for e in here.state.corpus
    ]
