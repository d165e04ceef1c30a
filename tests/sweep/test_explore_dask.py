"""`seedbed explore --scheduler`: plans on a Dask cluster, the same search as locally.

With the budget counted in runs the search is a function of its seed: in this
process, on the local worker pool and on Dask it writes the same log, and
its failures the same choice files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seedbed._harness.search import ExploreSpec, explore

pytest.importorskip(
    "distributed", reason="the Dask backend's tests need dask.distributed: uv sync installs it"
)

TARGET = "examples.rare:retries"


def _lines(out: Path) -> list[dict[str, Any]]:
    """The log's lines with the folder's name taken out of file paths, and the
    wall-clock seconds out of its stop line."""
    text = (out / "explore.jsonl").read_text().replace(str(out), "OUT")
    lines = [json.loads(row) for row in text.splitlines()]
    lines[-1].pop("seconds")
    return lines


def _files(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.glob("*/run-*.json"))}


def test_a_search_on_dask_is_the_search_here_and_on_the_pool(tmp_path: Path) -> None:
    def search(name: str, **how: Any) -> Path:
        out = tmp_path / name
        done = explore(ExploreSpec(TARGET, out, seed=4, runs=16, **how))
        assert done.state.runs == 16 and done.stopped == "16 runs done"
        return out

    here, pool, dask = search("here"), search("pool", jobs=2), search("dask", scheduler="local:2")
    assert _lines(dask) == _lines(here) == _lines(pool)
    assert _files(dask) == _files(here)
    kinds = {line["plan"]["kind"] for line in _lines(here)[1:-1]}
    assert kinds - {"fresh"}, "the search never branched: the test would not test replay"


def test_a_bad_scheduler_address_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from seedbed.cli import cli

    out = tmp_path / "out"
    ran = CliRunner().invoke(cli, ["explore", TARGET, "--runs", "3", "--scheduler", "local:0",
                                   "--out", str(out)])  # fmt: skip
    assert ran.exit_code == 2
    assert ran.output.strip() == "error: --scheduler local:0: write local:N with N >= 1 workers"
    assert not out.exists()  # so the same command, corrected, needs no --resume
