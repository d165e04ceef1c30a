"""Buckets, fault effectiveness and the assertion catalog, from results records."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from seedbed._harness.sweeps._declared import declared
from seedbed._harness.sweeps._display import LiveProgress, summary_lines
from seedbed._harness.sweeps._record import bucket_of, mask_numbers
from seedbed._harness.sweeps._summary import summarize


def record(seed: int, status: str = "pass", **fields: Any) -> dict[str, Any]:
    replay = f"seedbed run t --seed {seed}"
    return {"kind": "seed", "seed": seed, "status": status, "replay": replay, **fields}


def test_numbers_are_masked_but_node_names_and_words_keep_their_digits() -> None:
    assert mask_numbers("balance went negative: -30") == "balance went negative: <n>"
    assert mask_numbers("n2 saw index 41 after 0x7f3a at t=1.5e-3") == (
        "n2 saw index <n> after <n> at t=<n>"
    )
    assert bucket_of("Deadlock", "") == "Deadlock"


def test_failures_group_by_bucket_with_count_and_smallest_seed() -> None:
    bucket_a = {"bucket": "AssertionError: balance <n>", "location": "race.py:41"}
    records = [
        record(9, "fail", **bucket_a),
        record(4, "fail", **bucket_a),
        record(5, "crash", bucket="crash: the worker running this seed exited with status 3"),
        record(1),
    ]
    summary = summarize(records)
    assert (summary.seeds, summary.passed, summary.failed) == (4, 1, 3)
    assert summary.failing_seeds == [4, 5, 9]
    first, second = summary.buckets
    assert (first.name, first.count, first.smallest_seed) == ("AssertionError: balance <n>", 2, 4)
    assert first.replay == "seedbed run t --seed 4" and first.location == "race.py:41"
    assert (second.status, second.count) == ("crash", 1)
    text = "\n".join(summary_lines(summary, traceback=False))
    assert "2 x AssertionError: balance <n>" in text and "smallest seed 4, at race.py:41" in text
    assert "view:   seedbed view t --seed 4\n" in text  # each bucket names its view command
    assert "view:   seedbed view t --seed 5\n" in text


def test_fault_effectiveness_counts_seeds_where_a_fault_was_on_and_where_it_mattered() -> None:
    records = [
        record(0, faults={"crash": {"injected": 3, "effective": 2}}),
        record(1, faults={"crash": {"injected": 1, "effective": 0}}),
        record(2, faults={"crash": {"injected": 0, "effective": 0}}),
        record(3, faults={"partition": {"injected": 2, "effective": 2}}),
    ]
    summary = summarize(records)
    assert summary.faults["crash"] == {
        "seeds_on": 2, "seeds_effective": 1, "injected": 4, "effective": 2
    }  # fmt: skip
    text = "\n".join(summary_lines(summary, traceback=False))
    assert "crash      on in 50% of seeds, effective in 25% (4 injected, 2 effective)" in text


def test_the_assertion_catalog_names_every_sometimes_never_true() -> None:
    def catalog(leader: int, snapshot: int) -> dict[str, Any]:
        return {
            "leader elected": {"kind": "sometimes", "evaluated": 5, "true": leader,
                               "location": "kv.py:10"},
            "snapshot installed": {"kind": "sometimes", "evaluated": 2, "true": snapshot,
                                   "location": "kv.py:88"},
            "balance never negative": {"kind": "always", "evaluated": 9, "true": 9,
                                       "location": "kv.py:30"},
        }  # fmt: skip

    summary = summarize([record(0, assertions=catalog(1, 0)), record(1, assertions=catalog(0, 0))])
    assert summary.never_true == ["snapshot installed"]
    assert summary.assertions["leader elected"]["seeds_true"] == 1
    assert summary.assertions["leader elected"]["first_true_seed"] == 0
    text = "\n".join(summary_lines(summary, traceback=False))
    assert "never true: sometimes 'snapshot installed'" in text


def test_an_invariants_line_counts_the_seeds_where_it_broke_not_those_it_held_once() -> None:
    def catalog(broke: bool) -> dict[str, Any]:
        return {
            "invariant money_conserved": {"kind": "invariant", "evaluated": 50,
                                          "true": 49 if broke else 50, "location": "bank.py:7"},
            "a job is charged once": {"kind": "always", "evaluated": 3, "true": 3,
                                      "location": "jobs.py:23"},
        }  # fmt: skip

    broken = (3, 8)
    records = [
        record(seed, "fail" if seed in broken else "pass", assertions=catalog(seed in broken))
        for seed in range(10)
    ]
    summary = summarize(records)
    text = "\n".join(summary_lines(summary, traceback=False))
    assert "invariant 'invariant money_conserved' at bank.py:7: broke in 2 of 10 seeds " in text
    assert "(first: seed 3)" in text and "true in 10 of 10" not in text
    assert "always 'a job is charged once' at jobs.py:23: held in all 10 seeds" in text


def test_a_declared_sometimes_no_seed_reached_is_listed_and_fails_require_sometimes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "helpers.py").write_text(
        "import seedbed\n\ndef rare():\n    seedbed.sometimes(True, 'the rare path ran')\n"
    )
    (tmp_path / "service.py").write_text(
        "import seedbed\nfrom helpers import rare\n\nasync def main():\n"
        "    seedbed.sometimes(True, message='main started')\n"
        "    seedbed.sometimes(True, f'not {1} literal')\n"
    )
    monkeypatch.chdir(tmp_path)
    found = declared("service:main")
    assert found == {
        "main started": {"kind": "sometimes", "location": "service.py:5"},
        "the rare path ran": {"kind": "sometimes", "location": "helpers.py:4"},
    }
    reached = {"main started": {"kind": "sometimes", "evaluated": 1, "true": 1,
                                "location": "service.py:5"}}  # fmt: skip
    summary = summarize([record(0, assertions=reached), record(1, assertions=reached)], found)
    assert summary.never_true == ["the rare path ran"]  # what --require-sometimes fails on
    text = "\n".join(summary_lines(summary, traceback=False))
    assert "sometimes 'the rare path ran' at helpers.py:4: never evaluated in 2 seeds" in text


def test_on_a_terminal_the_progress_bar_shows_seeds_rate_and_failures() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, force_interactive=True, width=120)
    with LiveProgress(10, 0, 0, console=console) as progress:
        progress.seed_done(record(0))
        progress.seed_done(record(1, "fail", bucket="AssertionError: x"))
    shown = screen.getvalue()
    assert "2/10" in shown and "seeds/s" in shown and "1 failed" in shown
    assert "new failure, seed 1: AssertionError: x" in shown
