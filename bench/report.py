"""Benchmark: `seedbed report` on a large results file (a million seeds by default).

Writes a synthetic results file (contract 4, see `_results_fixture.py`) to a
temporary directory, then times reading it and writing the page, in this
process: wall and CPU seconds, seeds per CPU second, peak memory, and the
page's size (which must not grow with the seeds). It reports; it never gates.

    PYTHONHASHSEED=0 python bench/report.py [--seeds 1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from _results_fixture import write_results
from seedbed._harness.report import write_report


def measure(results: Path, page: Path) -> None:
    before_cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    started = time.perf_counter()
    aggregate = write_report(results, page)
    wall = time.perf_counter() - started
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - before_cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = results.stat().st_size / 1e6
    print(f"results: {aggregate.total:,} seeds, {size_mb:,.0f} MB, {aggregate.failed:,} failed")
    print(f"report:  {wall:.1f} s wall, {cpu:.1f} s CPU, {aggregate.total / cpu:,.0f} seeds/CPU s")
    print(f"memory:  peak RSS {peak_mb:,.0f} MB; page {page.stat().st_size / 1e3:,.0f} kB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        results, page = folder / "results.jsonl", folder / "report.html"
        started = time.perf_counter()
        write_results(results, args.seeds, resume_at=args.seeds // 2)
        print(f"wrote the results file in {time.perf_counter() - started:.1f} s")
        measure(results, page)


if __name__ == "__main__":
    main()
