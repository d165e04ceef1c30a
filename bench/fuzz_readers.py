"""Benchmark: every reader of every file seedbed writes, fed 100,000 damaged inputs.

Readers: the sweep's results reader (`sweep --resume`: read, check the
header, summarize), the report's (fold and render the page), the trace
reader, the choice-file reader, the history parser (with the
linearizability checker), and explore's: `explore --resume` (read the log,
rebuild the state, read the corpus files, plan the next batch and read what
each plan replays) fed a damaged log or a damaged corpus file, and `report`
of a search's folder. Each input is a valid file with a few mutations of
the kinds that broke readers before (a 5,000-digit number, nesting
thousands deep, a list or object where a string or number belongs, a cut
line, flipped bytes, NaN, invalid UTF-8). A reader may accept an input or
refuse it with a one-line `UsageError` (or the report's `ResultsError`);
anything else is a crash, and an input a reader spends more than
`HANG_SECONDS` on is a hang, both counted by reader and kind, with the first
input of each kept for a look. It reports; it never gates (the fuzz tier in
tests/fuzz is the gate, with a fixed budget).

    PYTHONHASHSEED=0 python bench/fuzz_readers.py [--inputs 100000] [--seed 0]
    PYTHONHASHSEED=0 python bench/fuzz_readers.py --only explore   # explore's readers alone
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

from seedbed._core.tracefile import read_trace
from seedbed._harness.report import ResultsError
from seedbed._harness.report._aggregate import read_results as fold_results
from seedbed._harness.report._page import render
from seedbed._harness.report._search import read_searches, render_search
from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.search._engine import _plan_of, _source, replayed
from seedbed._harness.search._plan import BATCH
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


SEARCH = "examples.rare:retries"  # explore's readers read a real search of it
SEARCH_SEED, SEARCH_RUNS = 3, 12
HANG_SECONDS = 20.0


def _explore_resume(log: Path) -> None:
    """What `explore --resume` does before its first run, on the folder of `log`."""
    spec = ExploreSpec(SEARCH, log.parent, SEARCH_SEED, runs=2 * SEARCH_RUNS, resume=True)
    search, snapshot = replayed(spec)
    for index in range(search.state.runs, search.state.runs + BATCH):
        _source(_plan_of(spec, index, snapshot), snapshot)  # reads the entry a plan replays


def _explore_report(path: Path) -> None:
    render_search(*read_searches(path.parent), generated_by="fuzz")


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
EXPLORE_READERS = ("explore --resume", "explore report", "explore corpus entry")


def explore_readers(folder: Path) -> None:
    """Add explore's readers, each given a copy of one real search's folder: the
    first two a damaged log, the last a damaged corpus file (read on resume)."""
    search = folder / "search"
    explore(ExploreSpec(SEARCH, search, SEARCH_SEED, runs=SEARCH_RUNS))
    log = (search / "explore.jsonl").read_text(encoding="utf-8")
    entry = next(iter(sorted((search / "corpus").glob("run-*.json"))))
    resume_with_entry: Callable[[Path], None] = lambda entry: _explore_resume(  # noqa: E731
        entry.parent.parent / "explore.jsonl"
    )
    readers = (_explore_resume, _explore_report, resume_with_entry)
    for name, reader in zip(EXPLORE_READERS, readers, strict=True):
        copy = folder / name.replace(" ", "-")
        shutil.copytree(search, copy)
        target = copy / ("corpus/" + entry.name if "entry" in name else "explore.jsonl")
        READERS[name] = (entry.read_text(encoding="utf-8") if "entry" in name else log, reader)
        INPUTS[name] = target


INPUTS: dict[str, Path] = {}  # where a reader's input is written (else folder/NAME.input)


class _Hang(Exception):
    """A reader spent more than HANG_SECONDS on one input."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: FrameType | None) -> None:
        raise _Hang(f"more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(
    inputs: int, seed: int, folder: Path, names: list[str]
) -> tuple[Counter[str], dict[str, str]]:
    rng = random.Random(seed)
    crashes: Counter[str] = Counter()
    first: dict[str, str] = {}
    for number in range(inputs):
        name = names[number % len(names)]
        valid, reader = READERS[name]
        path = INPUTS.get(name, folder / f"{name.split()[0]}.input")
        text = mutate(valid, rng)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            with _deadline(HANG_SECONDS):
                reader(path)
        except (UsageError, ResultsError) as exc:
            if "\n" in str(exc):
                crashes[f"{name}: a multi-line error"] += 1
        except _Hang:
            crashes[f"{name}: a hang"] += 1
            first.setdefault(f"{name}: a hang", text[:300])
        except Exception as exc:  # a crash: the reason this benchmark exists
            key = f"{name}: {type(exc).__name__}"
            crashes[key] += 1
            first.setdefault(key, text[:300])
    return crashes, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["explore"], default=None,
                        help="fuzz only these readers")  # fmt: skip
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        explore_readers(Path(folder))
        names = list(EXPLORE_READERS) if args.only == "explore" else list(READERS)
        crashes, first = run(args.inputs, args.seed, Path(folder), names)
    seconds = time.perf_counter() - started
    hangs = sum(count for key, count in crashes.items() if key.endswith(": a hang"))
    print(f"{args.inputs:,} inputs over {len(names)} readers in {seconds:.0f} s: "
          f"{sum(crashes.values()) - hangs:,} crashes, {hangs:,} hangs")  # fmt: skip
    for key, count in crashes.most_common():
        print(f"  {count:>7,}  {key}   first input: {first.get(key, '')[:120]!r}")


if __name__ == "__main__":
    main()
