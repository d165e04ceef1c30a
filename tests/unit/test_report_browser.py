"""The sweep report in a real browser: Debian's Chromium, driven by Playwright.

It checks what a person sees: the counts, a bucket's replay command (and that
the copy button copies it), a plot drawn with visible bars, the never-hit
`sometimes` flagged, run strings shown as text, no console errors and no
request beyond the file itself. A screenshot is kept under test-artifacts/
(gitignored) for a human to look at.

`.ci/run` installs chromium with apt-get when it is missing; this test skips,
saying so, only where /usr/bin/chromium is absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bench._results_fixture import HOSTILE, write_results

from seedbed._harness.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def seed_records(path: Path) -> list[dict[str, Any]]:
    lines = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return [record for record in lines if record["kind"] == "seed"]


def largest_bucket(seeds: list[dict[str, Any]]) -> tuple[str, int, int]:
    """(name, size, smallest seed) of the bucket the page lists first."""
    counts = Counter(r["bucket"] for r in seeds if r["status"] != "pass")
    smallest = {}
    for record in seeds:
        if record["status"] != "pass":
            smallest.setdefault(record["bucket"], record["seed"])
    name = min(counts, key=lambda b: (-counts[b], smallest[b], b))
    return name, counts[name], smallest[name]


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium "
    "(.ci/run installs it: apt-get install -y chromium)",
)
def test_the_report_renders_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    results, page_path = tmp_path / "results.jsonl", tmp_path / "report.html"
    write_results(results, 5000, resume_at=2500)
    write_report(results, page_path)
    seeds = seed_records(results)
    statuses = Counter(r["status"] for r in seeds)
    bucket, size, first_seed = largest_bucket(seeds)

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

        def stat(key: str) -> str:
            return page.locator(f'[data-stat="{key}"] .value').inner_text()

        assert stat("seeds") == f"{len(seeds):,}"
        for status in ("pass", "fail", "crash", "timeout"):
            assert stat(status) == f"{statuses[status]:,}"

        card = page.locator('[data-bucket="0"]')
        assert card.locator(".bucket-name").inner_text() == bucket
        assert card.locator(".bucket-count").inner_text() == f"{size:,}"
        replay = card.locator("code#replay-0").inner_text()
        assert replay == f"seedbed run examples.bank:scenario --seed {first_seed}"
        card.locator('button[data-target="replay-0"]').click()
        page.wait_for_function("document.querySelector('[data-bucket=\"0\"] button.copy')"
                               ".textContent === 'Copied'")  # fmt: skip
        assert page.evaluate("navigator.clipboard.readText()") == replay
        view = card.locator("code#view-0").inner_text()
        assert view == f"seedbed view examples.bank:scenario --seed {first_seed}"
        card.locator('button[data-target="view-0"]').click()
        page.wait_for_function(
            "navigator.clipboard.readText().then(t => t.startsWith('seedbed view'))"
        )
        assert page.evaluate("navigator.clipboard.readText()") == view

        bars = page.locator('[data-plot="0"] svg rect.fail')
        assert bars.count() > 10
        box = bars.first.bounding_box()
        assert box is not None and box["width"] > 2 and box["height"] > 0
        assert page.locator('[data-plot="1"] svg rect.bin').count() > 10

        never = page.locator('tr.warn:has-text("two leaders in one term")')
        assert never.locator(".badge").inner_text() == "never hit"
        assert page.get_by_text(HOSTILE).count() > 0  # shown as text, not run as markup
        assert page.evaluate("document.scripts.length") == 1

        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    assert problems == []
    assert requests == [page_path.as_uri()]
