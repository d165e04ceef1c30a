"""The documentation site, built strictly, read offline in Debian's Chromium.

What a reader relies on, with no network: opened as files (file://), the
home page shows and the navigation reaches every section and a tutorial;
served by `python -m http.server` on loopback (search runs in a web worker,
which browsers start only for a served page), search finds a page by words
in it and the result opens that page. Nothing is fetched from outside the
site.

`.ci/run` installs chromium with apt-get when it is missing; this test skips,
saying so, only where /usr/bin/chromium is absent.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run"]  # fmt: skip
ARTIFACTS = REPO / "test-artifacts"
SECTIONS = ["Tutorials", "How-to guides", "Reference", "Explanation"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mkdocs build --strict` into a fresh folder: a warning fails the build."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=REPO, capture_output=True, text=True, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_the_site_builds_with_a_page_for_every_part(site: Path) -> None:
    pages = [
        "index.html",
        "tutorials/virtual-time.html",
        "reference/cli.html",
        "reference/api.html",
        "reference/configs.html",
        "explanation/shrinking.html",
    ]
    for page in pages:
        assert (site / page).is_file(), page
    cli = (site / "reference" / "cli.html").read_text()
    for command in ["run", "replay", "sweep", "shrink", "check-determinism", "check-history",
                    "report", "lint", "view"]:  # fmt: skip
        assert f"seedbed {command}" in cli, command  # every command, from click
    configs = (site / "reference" / "configs.html").read_text()
    assert "a probability in [0, 1]" in configs  # the validator's words, generated


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    """The site over HTTP on loopback, a port of the kernel's choosing."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _ours(url: str) -> bool:
    return url.startswith(("file://", "http://127.0.0.1:", "data:", "blob:"))


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium "
    "(.ci/run installs it: apt-get install -y chromium)",
)
def test_home_navigation_and_search_work_offline(site: Path, served: str) -> None:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    outside: list[str] = []
    failed: list[str] = []
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("request", lambda r: None if _ours(r.url) else outside.append(r.url))
        page.on("requestfailed", lambda r: failed.append(r.url))
        page.goto((site / "index.html").as_uri())

        assert page.locator("article h1").first.inner_text().strip().rstrip("¶") == "seedbed"
        nav = page.locator("nav.md-nav--primary")
        for section in SECTIONS:
            assert nav.get_by_text(section, exact=True).count() >= 1, section

        nav.get_by_role("link", name="A program on virtual time").first.click()
        page.wait_for_url("**/tutorials/virtual-time.html")
        assert "A program on virtual time" in page.locator("article h1").first.inner_text()

        # From files, only search is missing (its worker needs a served page).
        missing = [url for url in failed if not url.endswith("/search/search_index.js")]
        from_files = [text for text in problems if "search_index.js" not in text]
        from_files = from_files[len(failed) - len(missing) :]  # one "failed to load" per miss
        problems.clear()
        page.goto(f"{served}/index.html")
        search = page.locator("input.md-search__input")
        search.click()  # the header's search box, as a reader would
        result = page.locator(".md-search-result__item a").first
        for _ in range(6):  # a query typed before the worker built its index is dropped
            search.fill("")
            search.type("choice file", delay=20)
            try:
                result.wait_for(state="visible", timeout=5_000)
                break
            except Exception:  # Playwright's TimeoutError: type again, the index may be ready
                continue
        result.wait_for(state="visible", timeout=5_000)
        count = page.locator(".md-search-result__item").count()
        page.screenshot(path=str(ARTIFACTS / "docs-search.png"))
        result.click()
        page.wait_for_load_state()
        body = page.locator("article").inner_text()
        page.goto(f"{served}/how-to/read-a-failure.html")  # reports: lines of 200 characters
        widths = page.evaluate(_CODE_WIDTHS)
        browser.close()

    assert count >= 1
    assert "choice file" in body.lower()  # the result opened a page that has the words
    assert not outside, f"the site fetched from outside itself: {outside[:3]}"
    assert not problems, problems
    assert not from_files and not missing, (from_files, missing)
    # A long line of a code block scrolls inside its block; the page never widens.
    assert widths["page"] <= widths["viewport"], widths
    assert widths["longest"] > widths["box"] and widths["scrolls"], widths


# The page's width against the window's, and the widest code block's content
# against its box, with whether that box scrolls sideways.
_CODE_WIDTHS = """() => {
  const blocks = [...document.querySelectorAll("article pre > code")];
  const widest = blocks.reduce((a, b) => (b.scrollWidth > a.scrollWidth ? b : a));
  const overflow = getComputedStyle(widest).overflowX;
  return {page: document.documentElement.scrollWidth, viewport: window.innerWidth,
          longest: widest.scrollWidth, box: widest.clientWidth,
          scrolls: overflow === "auto" || overflow === "scroll"};
}"""
