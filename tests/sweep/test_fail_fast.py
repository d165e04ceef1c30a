"""`seedbed sweep -x/--fail-fast` and `--max-failures N` (issue 28.7).

They stop the sweep cleanly once that many seeds have failed: the workers
stop, every finished seed's result is kept, the summary is printed with the
command that continues the sweep, and the exit status is 1 (seeds failed),
not an interruption's.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from seedbed.cli import cli

TARGET = "examples.race:main"  # a check-then-act race: some seeds in every hundred fail


def _sweep(out: Path, *flags: str) -> tuple[int, str, list[dict[str, object]]]:
    done = CliRunner().invoke(
        cli, ["sweep", TARGET, "--seeds", "200", "--jobs", "1", "--out", str(out), *flags]
    )
    lines = (out / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    records = [record for record in records if record["kind"] == "seed"]
    return done.exit_code, done.output, records


def test_fail_fast_stops_at_the_first_failing_seed(tmp_path: Path) -> None:
    code, output, records = _sweep(tmp_path, "-x")
    assert code == 1
    failing = [r for r in records if r["status"] != "pass"]
    assert len(failing) == 1 and records[-1] is failing[0]  # nothing ran after it (one worker)
    assert len(records) < 200
    assert f"stopped by its first failure after {len(records)} of 200 seeds" in output
    assert "replay: " in output and "--resume" in output.splitlines()[-1]


def test_max_failures_stops_after_n_and_resume_goes_on(tmp_path: Path) -> None:
    code, output, records = _sweep(tmp_path, "--max-failures", "2")
    assert code == 1
    assert sum(r["status"] != "pass" for r in records) == 2
    assert "stopped by --max-failures 2" in output
    code, output, more = _sweep(tmp_path, "--resume")
    assert len(more) == 200 and more[: len(records)] == records  # kept, not run again
