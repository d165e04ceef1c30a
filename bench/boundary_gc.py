"""What finalizing held loops' leftovers at their boundaries costs other libraries' suites.

A loop other code holds (`new_event_loop`, the policy) asks, when it is
closed and before the next one is made, whether a survivor of its runs with
a finalizer has become garbage, and runs a full collection if so
(`seedbed.aio._leftovers`). This runs the six suites of `tests/suites`
(cached under `.cache/suites/`; the tier's test downloads them) with a probe
around `_collect.at_boundary`, and prints per suite: loops, boundaries, full
collections, CPU milliseconds spent in all boundaries, and the objects the
process tracks at the end. Then what one full collection costs, in CPU, a
pytest process that has collected this repository's unit tests: what a
collection at every boundary would have cost. The suites run a second time
with the watching and asking turned off, for the process's whole CPU time
to compare with.

    PYTHONHASHSEED=0 python bench/boundary_gc.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import gc, json, os, resource, time
from seedbed.aio import _collect, _leftovers, _standalone

_real = _collect.at_boundary
if os.environ.get("BOUNDARY_OFF") == "1":  # as before: nothing watched, nothing asked
    _real = lambda forget: False
    _leftovers.watch = lambda: None
    _leftovers.watch_awaited = lambda awaited: None
_seen = {"boundaries": 0, "collections": 0, "cpu_ms": 0.0}

def _probe(forget):
    start = time.process_time()
    done = _real(forget)
    _seen["cpu_ms"] += (time.process_time() - start) * 1000
    _seen["boundaries"] += 1
    _seen["collections"] += done
    return done

_collect.at_boundary = _standalone.at_boundary = _probe

def pytest_sessionfinish(session):
    _seen["objects"] = len(gc.get_objects())
    _seen["process_cpu_s"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_utime, 2)
    with open(os.environ["BOUNDARY_PROBE_OUT"], "w") as out:
        json.dump(_seen, out)
"""

HEAP = """
import gc, sys, time, pytest
class Probe:
    def pytest_collection_finish(self, session):
        gc.collect()
        times = []
        for _ in range(9):
            start = time.process_time()
            gc.collect()
            times.append(time.process_time() - start)
        print("HEAP", len(session.items), len(gc.get_objects()), sorted(times)[4] * 1000)
pytest.main(["-q", "-p", "no:cacheprovider", "--collect-only", "tests/unit"], plugins=[Probe()])
"""


def suites() -> None:
    """One line per suite of the tier, run under the probe."""
    sys.path.insert(0, str(REPO / "tests" / "suites"))
    from _suites import environment, run_suite, sdist
    from test_other_suites import LIBRARIES

    python = environment(LIBRARIES)
    with tempfile.TemporaryDirectory() as tmp:
        for lib in LIBRARIES:
            (sdist(lib) / "boundary_probe.py").write_text(PROBE)
            out = Path(tmp) / f"{lib.name}.json"
            os.environ["BOUNDARY_PROBE_OUT"] = str(out)
            probed = dataclasses.replace(lib, options=(*lib.options, "-p", "boundary_probe"))
            outcome = run_suite(probed, python, Path(tmp))
            row = json.loads(out.read_text())
            print(f"{lib.name}: {len(outcome.passed)} passed, {outcome.loops} loops, {row}")


def heap() -> None:
    """One full collection's CPU time in a pytest process holding collected tests."""
    cmd = [sys.executable, "-c", HEAP]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
    line = next(line for line in done.stdout.splitlines() if line.startswith("HEAP"))
    _, items, objects, ms = line.split()
    print(f"pytest holding {items} tests: {objects} objects, a full collection {float(ms):.1f} ms")


if __name__ == "__main__":
    suites()
    os.environ["BOUNDARY_OFF"] = "1"
    print("-- the same without watching or asking (process_cpu_s to compare):")
    suites()
    heap()
