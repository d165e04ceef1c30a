"""How many tests of thread-using libraries' own suites seedbed's loop loses.

Runs each library's test suite (its sdist from PyPI, unmodified, through
`tests/suites/_suites.py` and its conftest) three times: on stock asyncio,
on seedbed's loop with `threads="lanes"` (the default: program threads are
simulated threads) and with `threads="inline"` (executor work inline, thread
starts and cross-thread waits refused). Of the tests that pass on stock
asyncio, it counts those that also pass on each seedbed mode, how many of
those really ran on a seedbed loop (one took a step during the test: a
purely synchronous test passes on any loop), and groups the lost ones by
the first line of their failure.

The libraries: Starlette (its `TestClient` runs the app's loop in a real
thread through anyio's blocking portal, and sync endpoints in anyio's worker
threads), asgiref (`sync_to_async` / `async_to_sync`: executors, a loop in
a thread per `async_to_sync` call, `CurrentThreadExecutor`) and anyio's own
`to_thread` / `from_thread` tests. All three make their loops through
asyncio's event loop policy (anyio's pytest plugin, `asyncio.new_event_loop`
in asgiref's threads), so the conftest installs seedbed's policy as well.

    PYTHONHASHSEED=0 python bench/thread_suites.py [--only starlette] [--modes stock,lanes,inline]

Reports and never gates (exit 0). A cold cache downloads the sdists and
builds a venv under `.cache/suites/venv-threads-*` (a minute or two); each
full pass takes a few minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "suites"))
from _suites import Library, Outcome, environment, run_suite

ANYIO = "anyio==4.16.0"
TRIO = "trio==0.35.0"
BLOCKBUSTER = "blockbuster==1.5.29"  # both starlette's and anyio's conftests activate it

LIBRARIES = [
    Library(
        "starlette",
        "1.10.0",
        "tests",
        # Its dev dependency group, as pinned in its uv.lock (bar blockbuster,
        # whose 1.5.29 anyio's tests ask for), without the linters and docs.
        test_deps=(
            ANYIO, TRIO, BLOCKBUSTER, "httpx==0.28.1", "httpx2[zstd]==2.13.1",
            "itsdangerous==2.2.0", "jinja2==3.1.6", "python-multipart==0.0.32",
            "pyyaml==6.0.3", "opentelemetry-api==1.44.0", "opentelemetry-sdk==1.44.0",
            "importlib-metadata==9.0.1",
        ),
        policy=True,  # anyio's pytest plugin and TestClient's portal thread: the policy
    ),
    Library(
        "asgiref",
        "3.13.0",
        "tests",
        test_deps=("packaging==26.4",),
        policy=True,  # async_to_sync makes a loop with asyncio.new_event_loop() in a thread
    ),
    Library(
        "anyio",
        "4.16.0",
        "tests",
        test_deps=(
            TRIO, BLOCKBUSTER, "trustme==1.2.1", "pytest-mock==3.17.0", "psutil==7.2.2",
            "hypothesis==6.170.17", "truststore==0.10.4",
        ),
        policy=True,
        # Its thread tests on the plain asyncio backend (uvloop is not installed;
        # trio's half never touches asyncio). Upstream's addopts load the anyio
        # plugin by name; here its entry point does.
        options=("-k", "(test_to_thread or test_from_thread) and not trio and not uvloop"),
    ),
]  # fmt: skip

MODES = {
    "stock": {"SEEDBED_SUITE_STOCK": "1"},
    "lanes": {"SEEDBED_SUITE_THREADS": "lanes"},
    "inline": {"SEEDBED_SUITE_THREADS": "inline"},
}
SUITE_TIMEOUT = 1800  # seconds for one suite in one mode (two shared cores)
# Seconds for one test (pytest-timeout; the tier's 60 would make a suite whose
# every thread test hangs take hours). Stock asyncio's slowest test here takes ~2 s.
TEST_TIMEOUT = 20


def key(test_id: str) -> str:
    """One spelling for a pytest node id and a junit-derived id: `a/b.py::c[p]`,
    `a::b::c[p]` (a junit classname whose module file was not found) alike."""
    name, bracket, params = test_id.partition("[")
    return name.replace(".py::", "::").replace("/", "::") + bracket + params


def reason(message: str) -> str:
    """A failure's first line, with what varies between tests taken out."""
    line = re.sub(r"0x[0-9a-f]+", "0x...", message)
    line = re.sub(r"<[^<>]*(object|Future|Task|Thread)[^<>]*>", "<...>", line)
    return line[:150]


def report(lib: Library, outcomes: dict[str, Outcome]) -> None:
    stock = outcomes.get("stock")
    print(f"\n== {lib.name} {lib.version}")
    if stock is None:
        for mode, alone in outcomes.items():
            print(f"  {mode:6s}: {len(alone.passed)} pass, {len(alone.failed)} fail, "
                  f"{len(alone.on_loop)} ran on a seedbed loop, {alone.loops} loops")  # fmt: skip
        return
    good = set(stock.passed)
    print(f"  stock : {len(good)} pass ({len(stock.failed)} fail, {len(stock.skipped)} skipped)")
    for mode in ("lanes", "inline"):
        out = outcomes.get(mode)
        if out is None:
            continue
        kept = good & set(out.passed)
        lost = sorted(good - kept)
        ran = {key(t) for t in out.on_loop}
        on_loop = {t for t in kept if key(t) in ran}
        print(f"  {mode:6s}: {len(kept)}/{len(good)} pass ({len(on_loop)} of them ran on a "
              f"seedbed loop; {out.loops} seedbed loops made), {len(lost)} lost")  # fmt: skip
        reasons = Counter(
            reason(out.failed[t]) if t in out.failed
            else "skipped" if t in out.skipped else "not reported (the run stopped?)"
            for t in lost
        )  # fmt: skip
        for why, count in reasons.most_common(8):
            print(f"      {count:4d}  {why}")
        if len(reasons) > 8:
            print(f"      {sum(reasons.values()) - sum(c for _, c in reasons.most_common(8)):4d}"
                  f"  ({len(reasons) - 8} other reasons)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated library names")
    parser.add_argument("--modes", default="stock,lanes,inline")
    parser.add_argument("--lost", action="store_true", help="list every lost test")
    parser.add_argument("--timeout", type=int, default=TEST_TIMEOUT, help="seconds per test")
    args = parser.parse_args()
    libs = [lib for lib in LIBRARIES if not args.only or lib.name in args.only.split(",")]
    python = environment(LIBRARIES, name="venv-threads")
    with tempfile.TemporaryDirectory() as tmp:
        for lib in libs:
            outcomes = {}
            lib = dataclasses.replace(lib, options=(*lib.options, f"--timeout={args.timeout}"))
            for mode in args.modes.split(","):
                workdir = Path(tmp) / f"{lib.name}-{mode}"
                workdir.mkdir()
                outcomes[mode] = run_suite(
                    lib, python, workdir, extra_env=MODES[mode], timeout=SUITE_TIMEOUT
                )
            report(lib, outcomes)
            if args.lost and "stock" in outcomes:
                for mode in ("lanes", "inline"):
                    if mode in outcomes:
                        out = outcomes[mode]
                        for t in sorted(set(outcomes["stock"].passed) - set(out.passed)):
                            print(f"    {mode} lost {t}: {out.failed.get(t, '-')[:100]}")


if __name__ == "__main__":
    main()
