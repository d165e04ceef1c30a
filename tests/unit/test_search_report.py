"""`seedbed report` of a search's folder: coverage over runs, explore against a
plain sweep of as many runs, the corpus, what was never reached, the failures.

The page reads only the folder's logs, loads nothing, and shows what a person
needs: two lines on the plot when `--versus-sweep` ran, a row per corpus
entry, each never-reached feature, a failure's replay command to copy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from seedbed._harness.report._search import coverage_plot, read_search
from seedbed.cli import cli

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LAG = "examples.rare:lag"


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A search of the lag bug (stopped at its first failure) and its page."""
    folder = tmp_path_factory.mktemp("search")
    out = folder / "out"
    ran = CliRunner().invoke(cli, ["explore", LAG, "--runs", "400", "--seed", "0", "--out",
                                   str(out), "--stop-on-failure", "--versus-sweep"])  # fmt: skip
    assert ran.exit_code == 1, ran.output  # it found the bug
    assert "plain sweep of" in ran.output
    page = folder / "page.html"
    shown = CliRunner().invoke(cli, ["report", str(out), "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    assert "a search of" in shown.output and "1 failed" in shown.output
    return out, page


def _lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(row) for row in log.read_text().splitlines()]


def test_the_plain_sweep_ran_as_many_runs_from_seed_0(searched: tuple[Path, Path]) -> None:
    out, _ = searched
    search, sweep = _lines(out / "explore.jsonl"), _lines(out / "sweep" / "explore.jsonl")
    runs = [line for line in search if line["kind"] == "run"]
    plain = [line for line in sweep if line["kind"] == "run"]
    assert sweep[0]["plain"] is True
    assert len(plain) == len(runs)
    fresh = [{"index": n, "seed": n, "kind": "fresh", "prefix": 0} for n in range(len(runs))]
    assert [line["plan"] for line in plain] == fresh


def test_the_page_holds_both_curves_the_corpus_and_the_failure(
    searched: tuple[Path, Path],
) -> None:
    out, page = searched
    html = page.read_text()
    assert html.count("<polyline") == 2
    assert 'class="explore"' in html and 'class="sweep"' in html
    kept = [line for line in _lines(out / "explore.jsonl") if line.get("entry")]
    assert f'Corpus <span class="count">{len(kept):,}</span>' in html
    assert all(line["entry"] in html for line in kept)
    assert f"seedbed run {LAG} --choices {out}/failures/run-" in html
    assert "://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")  # loads nothing
    assert " src=" not in html and "Content-Security-Policy" in html


def test_never_reached_features_and_unreadable_lines_are_shown(tmp_path: Path) -> None:
    header = {"kind": "seedbed explore", "version": 1, "target": "t:s", "seed": 3}
    run = {"kind": "run", "index": 0, "plan": {"index": 0, "seed": 9, "kind": "fresh"},
           "new": ["sometimes: a"], "declared": ["sometimes: a", "sometimes: <b>never</b>"],
           "entry": None, "bucket": None}  # fmt: skip
    log = tmp_path / "explore.jsonl"
    log.write_text(json.dumps(header) + "\n" + json.dumps(run) + '\n{"kind": "ru')
    assert read_search(log).never_reached() == ["sometimes: <b>never</b>"]
    page = tmp_path / "page.html"
    shown = CliRunner().invoke(cli, ["report", str(tmp_path), "--html", str(page)])
    assert shown.exit_code == 0, shown.output  # a run being written is no damage
    html = page.read_text()
    assert "<code>sometimes: &lt;b&gt;never&lt;/b&gt;</code>" in html  # escaped, listed
    assert "last line cut short" in html
    assert "No plain sweep to compare" in html and html.count("<polyline") == 1
    log.write_text(json.dumps(header) + "\n" + '{"kind": "ru\n' + json.dumps(run) + "\n")
    shown = CliRunner().invoke(cli, ["report", str(tmp_path), "--html", str(page)])
    assert shown.exit_code == 2 and shown.stderr.count("\n") == 1  # a damaged line: a look
    assert f"{log}: 1 malformed line(s), the first at line 2 (not a JSON line" in shown.stderr
    assert "1 lines unreadable (skipped; the first, line 2" in page.read_text()


def test_the_plot_climbs_with_the_features_reached() -> None:
    svg = coverage_plot([1, 1, 3, 4], [1, 2, 2, 2])
    points = svg.split('class="explore" points="')[1].split('"')[0].split()
    heights = [float(point.split(",")[1]) for point in points]
    assert heights == sorted(heights, reverse=True)  # y falls as features rise
    assert heights[-1] < heights[0]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not at /usr/bin/chromium")
def test_the_search_report_renders_in_chromium(searched: tuple[Path, Path]) -> None:
    from playwright.sync_api import sync_playwright

    _, page_path = searched
    problems: list[str] = []
    requests: list[str] = []
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(page_path.as_uri())
        for css in ("explore", "sweep"):
            box = page.locator(f"#coverage polyline.{css}").bounding_box()
            assert box is not None and box["width"] > 500 and box["height"] > 20, css
        assert page.locator("#corpus tbody tr").count() >= 2
        replay = page.locator("code#replay-0").inner_text()
        assert f"seedbed run {LAG} --choices " in replay and replay.endswith(".json")
        page.locator('button[data-target="replay-0"]').click()
        page.wait_for_function("navigator.clipboard.readText().then(t => t.length > 0)")
        assert page.evaluate("navigator.clipboard.readText()") == replay
        page.screenshot(path=str(ARTIFACTS / "search-report.png"), full_page=True)
        browser.close()
    assert problems == []
    assert requests == [page_path.as_uri()]
