"""`seedbed report`: a results file (contract 4) as one self-contained HTML page.

The sweep writing real results files is built on another branch; these tests
use files written to the contract by `bench/_results_fixture.py`, and count
what the page must say straight from the file's lines.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bench._results_fixture import HOSTILE, write_results

from seedbed._harness.report import ResultsError, read_results, write_report

REPO = Path(__file__).resolve().parents[2]


def seedbed(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ}
    environment.pop("SEEDBED_REEXEC", None)
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=REPO, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip


def records(path: Path) -> list[dict[str, Any]]:
    lines = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return [record for record in lines if record["kind"] == "seed"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sweep") / "results.jsonl"
    write_results(path, 3000, first=100, resume_at=1600)
    return path


def test_totals_buckets_and_tallies_match_the_file(results: Path) -> None:
    seeds = records(results)
    aggregate = read_results(results.parent)  # a sweep directory works too
    assert aggregate.total == len(seeds) == 3000
    assert {s: n for s, n in aggregate.counts.items() if n} == Counter(r["status"] for r in seeds)
    assert set(aggregate.counts) == {"pass", "fail", "crash", "timeout"}
    assert aggregate.headers == 2  # resumed once
    failing = [r for r in seeds if r["status"] != "pass"]
    assert {name: b.count for name, b in aggregate.buckets.items()} == dict(
        Counter(r["bucket"] for r in failing)
    )
    for name, bucket in aggregate.buckets.items():
        mine = sorted(r["seed"] for r in failing if r["bucket"] == name)
        assert bucket.seeds == mine[: len(bucket.seeds)]
        assert bucket.example["replay"].endswith(f"--seed {mine[0]}")
    crash = aggregate.faults["crash"]
    assert crash.injected == sum(r["faults"]["crash"]["injected"] for r in seeds if r["faults"])
    assert crash.effective == sum(r["faults"]["crash"]["effective"] for r in seeds if r["faults"])
    never = aggregate.assertions["two leaders in one term"]
    assert never.kind == "sometimes" and never.true == 0 and never.seeds_evaluated > 0


def test_the_page_is_self_contained_and_escapes_every_run_string(
    results: Path, tmp_path: Path
) -> None:
    page_path = tmp_path / "report.html"
    write_report(results, page_path)
    page = page_path.read_text(encoding="utf-8")
    assert HOSTILE not in page  # the raw markup never appears...
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page  # ...only escaped
    assert page.count("<script>") == 1  # the page's own copy script, nothing else
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched
    assert "default-src 'none'" in page  # and the browser is told to refuse any fetch
    assert len(page) < 200_000  # aggregated: no row per seed


def test_every_failing_bucket_names_the_view_command_of_its_first_seed(
    results: Path, tmp_path: Path
) -> None:
    page_path = tmp_path / "report.html"
    write_report(results, page_path)
    page = page_path.read_text(encoding="utf-8")
    cards = page.split('data-bucket="')[1:]
    assert cards and len(cards) == len(re.findall(r'<code id="view-\d+">', page))
    for card in cards:
        replay = re.search(r'<code id="replay-\d+">seedbed run ([^<]*)</code>', card)
        view = re.search(r'<code id="view-\d+">seedbed view ([^<]*)</code>', card)
        assert replay and view and view[1] == replay[1]  # view takes run's flags


def test_the_page_does_not_grow_with_the_number_of_seeds(tmp_path: Path) -> None:
    sizes = []
    for seeds in (2000, 8000):
        results, page = tmp_path / f"r{seeds}.jsonl", tmp_path / f"r{seeds}.html"
        write_results(results, seeds)
        write_report(results, page)
        sizes.append(page.stat().st_size)
    assert sizes[1] < sizes[0] * 1.2


def test_malformed_lines_are_counted_shown_and_exit_two(results: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = "{not json\n"
    lines[9] = '{"kind": "seed", "seed": -4, "status": "pass", "wall_time": 0.1}\n'
    lines.append('{"kind": "seed", "seed": 99999, "sta')  # an interrupted sweep's last write
    damaged.write_text("".join(lines), encoding="utf-8")
    page = tmp_path / "out.html"
    done = seedbed("report", str(damaged), "--html", str(page))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "2 malformed line(s), the first at line 6 (not valid JSON)" in done.stderr
    html = page.read_text(encoding="utf-8")
    assert 'data-stat="malformed"' in html and "{not json" in html
    assert "an interrupted sweep" in html
    assert read_results(damaged).total == 2998


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("", "not a seedbed results file"),
        ('{"kind": "other"}\n', "not a seedbed results file"),
        ('{"kind": "header", "version": 9, "target": "x:y"}\n', "newer than this seedbed reads"),
    ],
)
def test_unusable_files_get_one_line_and_exit_two(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "results.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    done = seedbed("report", str(path), "--html", str(tmp_path / "out.html"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and expected in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.html").exists()


def test_an_unwritable_page_is_a_one_line_error(results: Path, tmp_path: Path) -> None:
    done = seedbed("report", str(results), "--html", str(tmp_path / "missing" / "out.html"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "cannot write the report" in done.stderr


def test_a_clean_file_reports_and_exits_zero(results: Path, tmp_path: Path) -> None:
    done = seedbed("report", str(results), "--html", str(tmp_path / "out.html"))
    assert done.returncode == 0, done.stderr
    assert re.match(r"wrote .*out\.html: 3,000 seeds, \d+ failed in \d+ buckets", done.stdout)


def test_unknown_fields_and_kinds_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [
        {"kind": "header", "version": 1, "target": "a:b", "future": [1, 2]},
        {"kind": "note", "text": "a kind of line from a later seedbed"},
        {"kind": "seed", "seed": 3, "status": "fail", "wall_time": 0.5, "bucket": "E: x",
         "replay": "seedbed run a:b --seed 3", "new_field": {"x": 1}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    aggregate = read_results(path)
    assert aggregate.malformed == 0 and aggregate.total == 1 and list(aggregate.buckets) == ["E: x"]


def test_results_error_is_raised_for_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no such file"):
        read_results(tmp_path / "nothing.jsonl")


@pytest.mark.parametrize(
    "seeds",
    [
        [],  # a sweep that has not finished a seed yet
        [{"seed": 5, "status": "pass", "wall_time": 0.0, "virtual_time": 0.0}],
        [
            {"seed": s, "status": "timeout", "wall_time": 30.0, "bucket": "timeout: <n> s"}
            for s in (1, 2)
        ],
    ],
)
def test_tiny_and_degenerate_files_still_make_a_page(
    tmp_path: Path, seeds: list[dict[str, Any]]
) -> None:
    path = tmp_path / "results.jsonl"
    lines = [{"kind": "header", "version": 1, "target": "a:b"}]
    lines += [{"kind": "seed", **seed} for seed in seeds]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    aggregate = write_report(path, tmp_path / "out.html")
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert aggregate.total == len(seeds)
    assert f'data-stat="seeds"><div class="value">{len(seeds)}</div>' in page
    assert page.count("<svg") == 3
