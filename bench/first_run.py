"""Where the first `seedbed.run` of a process spends its real time (issue 31.6).

    PYTHONHASHSEED=0 PYTHONPATH=. python bench/first_run.py [--runs 5] [--import aiohttp]

Each sample is a fresh interpreter that imports seedbed (and `--import`
modules, as a test suite would), then times, outside any run:

- the first `seedbed.run` of a trivial program, and the second;
- `asyncio.run` of the same program on the stock loop, for scale;
- in a separate interpreter, the first activation's three parts by hand:
  building the stand-in table (`_build_replacements`), scanning every
  module's globals for copies of the originals (`_scan_new_modules`), and
  the heap search for copies held elsewhere (`_holders._search`, one or two
  `gc.get_referrers` walks of every tracked object).

Prints medians and ratios (wall time on this shared machine swings 2x; the
ratios and the split hold far better), the load average, and the number of
objects the collector tracks. Reports, never gates. Hypothesis users: see
docs/how-to/other-suites.md ("The first run's cost").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_RUNS = r"""
import asyncio, gc, json, sys, time
for name in MODULES: __import__(name)
import seedbed

async def main():
    await asyncio.sleep(1)
    return 1

def timed(call):
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1e3

first = timed(lambda: seedbed.run(main, seed=1))
second = timed(lambda: seedbed.run(main, seed=1))
stock = timed(lambda: asyncio.run(main()))  # sleeps 1 s of real time: subtracted
print(json.dumps({"first": first, "second": second, "stock": stock - 1000.0,
                  "objects": len(gc.get_objects())}))
"""

_PARTS = r"""
import json, time
for name in MODULES: __import__(name)
import seedbed
from seedbed.aio import _holders, _interpose

def timed(call):
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1e3

build = timed(_interpose._build_replacements)
scan = timed(_interpose._scan_new_modules)
excluded = {id(x) for x in _interpose._excluded()}
search = timed(lambda: _holders._search(_interpose._replacements, excluded))
print(json.dumps({"build": build, "scan": scan, "search": search}))
"""


def _sample(script: str, modules: list[str]) -> dict[str, float]:
    code = script.replace("MODULES", repr(modules))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _median(samples: list[dict[str, float]], key: str) -> float:
    return statistics.median(sample[key] for sample in samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--import", dest="modules", action="append", default=[])
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs = [_sample(_RUNS, args.modules) for _ in range(args.runs)]
    parts = [_sample(_PARTS, args.modules) for _ in range(args.runs)]
    first, second, stock = (_median(runs, k) for k in ("first", "second", "stock"))
    build, scan, search = (_median(parts, k) for k in ("build", "scan", "search"))
    print(f"after importing {['seedbed', *args.modules]}: {_median(runs, 'objects'):,.0f} objects")
    print(f"first seedbed.run   {first:8.1f} ms  ({first / stock:5.1f}x stock asyncio.run)")
    print(f"second seedbed.run  {second:8.1f} ms  ({second / stock:5.1f}x stock asyncio.run)")
    print(f"stock asyncio.run   {stock:8.1f} ms")
    print("the first activation, by part:")
    for label, value in (("stand-in table", build), ("module scan", scan), ("heap search", search)):
        print(f"  {label:16} {value:8.1f} ms  ({value / first:4.0%} of the first run)")
    print(f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}, {args.runs} runs (medians)")


if __name__ == "__main__":
    main()
