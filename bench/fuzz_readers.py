"""Benchmark: every reader of every file seedbed writes, fed 100,000 damaged inputs.

Readers: the sweep's results reader (`sweep --resume`: read, check the
header, summarize), the report's (fold and render the page), the trace
reader, the choice-file reader and the history parser (with the
linearizability checker). Each input is a valid file with a few mutations
of the kinds that broke readers before (a 5,000-digit number, nesting
thousands deep, a list or object where a string or number belongs, a cut
line, flipped bytes, NaN). A reader may accept an input or refuse it with a
one-line `UsageError` (or the report's `ResultsError`); anything else is a
crash, counted by reader and exception type, with the first input of each
kept for a look. It reports; it never gates (the fuzz tier in tests/fuzz
is the gate, with a fixed budget).

    PYTHONHASHSEED=0 python bench/fuzz_readers.py [--inputs 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from seedbed._core.tracefile import read_trace
from seedbed._harness.report import ResultsError
from seedbed._harness.report._aggregate import read_results as fold_results
from seedbed._harness.report._page import render
from seedbed._harness.shrink._file import read_choices
from seedbed._harness.sweeps._results import check_resumable
from seedbed._harness.sweeps._results import read_results as resume_results
from seedbed._harness.sweeps._summary import summarize
from seedbed.check import MODELS, linearizable, parse_history
from seedbed.errors import UsageError

sys.set_int_max_str_digits(0)  # the mutator writes huge numbers; the readers run with the limit
HUGE = "9" * 5000
HOSTILE = [HUGE, "[" * 3000 + "]" * 3000, "[1, 2]", '{"a": 1}', "NaN", "-1", "true", "null",
           '"\\u202e"', "1e999", "{}", "[]", '"x"', "0.5"]  # fmt: skip

RESULTS = "\n".join([
    '{"kind": "header", "version": 1, "target": "m:f", "first": 0, "seeds": 2, "options": {}, '
    '"seedbed": "0.1.0"}',
    '{"kind": "seed", "seed": 0, "status": "pass", "wall_time": 0.1, "virtual_time": 1.5, '
    '"steps": 40, "error_type": null, "message": null, "bucket": null}',
    '{"kind": "seed", "seed": 1, "status": "fail", "wall_time": 0.2, "virtual_time": 2.0, '
    '"steps": 12, "error_type": "AssertionError", "message": "boom 3", "bucket": "AE: boom N", '
    '"location": "m.py:3", "replay": "seedbed run m:f --seed 1", '
    '"faults": {"crash": {"injected": 2, "effective": 1}}, '
    '"assertions": {"ok": {"kind": "always", "evaluated": 3, "true": 2}}, "profile": {"p": 1}}',
]) + "\n"  # fmt: skip
TRACE = "\n".join([
    '{"options": {}, "python": "3.11.7", "seed": 5, "seedbed": "0.1.0"}',
    '["draw", "loop", "callback cpu costs", 123]', '["time", 1500]', '["task", 2, "Task-2", "f"]',
    '{"end": 3, "failure": null, "hash": "00"}',
]) + "\n"  # fmt: skip
CHOICES = json.dumps({
    "kind": "seedbed choices", "version": 1, "target": "m:f", "seed": 7, "options": {},
    "failure": None, "streams": {"nemesis": [["nemesis: delay", 0.25], ["order", "2,0,1"]]},
}) + "\n"  # fmt: skip
HISTORY = "\n".join([
    '{"process": 0, "type": "invoke", "f": "write", "value": 1}',
    '{"process": 0, "type": "ok", "f": "write", "value": 1}',
    '{"process": 1, "type": "invoke", "f": "read", "value": null}',
    '{"process": 1, "type": "ok", "f": "read", "value": 1}',
]) + "\n"  # fmt: skip


def mutate(text: str, rng: random.Random) -> str:
    """A few damaging edits: a token replaced, a line cut, bytes flipped, lines swapped."""
    for _ in range(rng.randint(1, 3)):
        action = rng.randrange(5)
        tokens = [i for i, c in enumerate(text) if c in ":,["]
        if action <= 1 and tokens:
            at = rng.choice(tokens) + 1
            end = at
            while end < len(text) and text[end] not in ",}]\n":
                end += 1
            text = text[:at] + " " + rng.choice(HOSTILE) + text[end:]
        elif action == 2 and text:
            text = text[: rng.randrange(len(text))]
        elif action == 3 and text:
            at = rng.randrange(len(text))
            text = text[:at] + chr(rng.randrange(1, 0x3000)) + text[at + 1 :]
        else:
            lines = text.splitlines(keepends=True)
            rng.shuffle(lines)
            text = "".join(lines)
    return text


def _resume(path: Path) -> None:
    results = resume_results(path)
    summarize(list(results.seeds.values()))
    check_resumable(path, results, {"target": "m:f", "options": {}})


def _report(path: Path) -> None:
    render(fold_results(path), generated_by="fuzz")


def _history(path: Path) -> None:
    history = parse_history(path.read_text(encoding="utf-8", errors="replace"), str(path))
    for name in sorted(MODELS):
        with contextlib.suppress(UsageError):  # the history does not fit this model
            linearizable(history, MODELS[name](), timeout=2)


READERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "sweep --resume": (RESULTS, _resume),
    "report": (RESULTS, _report),
    "trace": (TRACE, read_trace),
    "choices": (CHOICES, lambda path: read_choices(path, "m:f")),
    "history": (HISTORY, _history),
}


def run(inputs: int, seed: int, folder: Path) -> tuple[Counter[str], dict[str, str]]:
    rng = random.Random(seed)
    crashes: Counter[str] = Counter()
    first: dict[str, str] = {}
    names = list(READERS)
    for number in range(inputs):
        name = names[number % len(names)]
        valid, reader = READERS[name]
        path = folder / f"{name.split()[0]}.input"
        text = mutate(valid, rng)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            reader(path)
        except (UsageError, ResultsError) as exc:
            if "\n" in str(exc):
                crashes[f"{name}: a multi-line error"] += 1
        except Exception as exc:  # a crash: the reason this benchmark exists
            key = f"{name}: {type(exc).__name__}"
            crashes[key] += 1
            first.setdefault(key, text[:300])
    return crashes, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        crashes, first = run(args.inputs, args.seed, Path(folder))
    seconds = time.perf_counter() - started
    print(f"{args.inputs:,} inputs over {len(READERS)} readers in {seconds:.0f} s: "
          f"{sum(crashes.values()):,} crashes")  # fmt: skip
    for key, count in crashes.most_common():
        print(f"  {count:>7,}  {key}   first input: {first.get(key, '')[:120]!r}")


if __name__ == "__main__":
    main()
