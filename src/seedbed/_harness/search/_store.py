"""The search on disk, written as it goes: `--resume` continues from it.

    OUT/explore.jsonl        a header line, then one line per finished run
    OUT/explore.lock         held by the search writing the folder (`sweeps._folder.locked`)
    OUT/corpus/run-N.json    the choice file of each run kept in the corpus
    OUT/failures/run-N.json  the choice file of each failure identity's first run
    OUT/sweep/               with --versus-sweep: a plain sweep of as many runs, kept
                             the same way (its header says "plain")

Choice files are the shrinker's (`seedbed run TARGET --choices FILE` replays
one, `seedbed shrink TARGET --choices FILE` shrinks it). A file keeps each
stream's draws but not how the streams interleave, which a branch's prefix
needs: a corpus line keeps that order, run-length encoded. A file is written
(through a temporary file) before the line that names it, and every line
goes out in one `write` on a file opened for appending (the sweep's results
writer), so a killed search loses only the runs not yet written; a torn last
line is cut off on resume. The log is read back line by line, each line
checked (`_log`), and nothing of it is kept but the search's state: a corpus
entry's draws are read back from its file when needed (`_corpus`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from seedbed._core.choices import Choice, by_stream
from seedbed._core.files import NotRegular, regular_file
from seedbed._harness.search._corpus import ChoiceCache, Order, StoredChoices
from seedbed._harness.search._log import KIND, LOG, Checked, LogFile
from seedbed._harness.search._plan import BATCH
from seedbed._harness.shrink._file import RUN_OPTIONS, ChoiceFile, read_choices, write_choices
from seedbed._harness.sweeps._results import ResultsWriter
from seedbed.errors import UsageError

VERSION = 2  # 2: follow-ups and strikes (a version-1 log is refused on --resume)
SWEEP = "sweep"  # OUT/sweep/: a plain sweep of the same runs, for the report to compare
CORPUS, FAILURES = "corpus", "failures"
_SHORT = 60  # characters of a recorded value shown in a refusal


def header_of(target: str, seed: int, options: dict[str, Any], plain: bool = False,
              branches: tuple[str, ...] = ()) -> dict[str, Any]:  # fmt: skip
    header: dict[str, Any] = {"kind": KIND, "version": VERSION, "target": target, "seed": seed,
                              "options": options, "batch": BATCH}  # fmt: skip
    if plain:
        header["plain"] = True  # every run a fresh seed, 0, 1, 2, ...
    if branches:
        header["branches"] = list(branches)  # packages whose branches are features
    return header


class Store:
    """One search's folder: its log read back (`lines`), then appended to (`start`)."""

    def __init__(self, out: Path, header: dict[str, Any], resume: bool) -> None:
        """Refuse a folder holding a search unless resuming, and a log that is not a file."""
        self.out = out
        self.header = header
        self.log = out / LOG
        self.cache = ChoiceCache(self._read_entry)
        self._resuming = _holds_a_log(self.log)
        if self._resuming and not resume:
            raise UsageError(f"{self.log} holds a search already: pass --resume to "
                             "continue it, or choose another --out")  # fmt: skip
        self._keep: int | None = None  # bytes of the log to keep; None: a new log
        self._writer: ResultsWriter | None = None

    def lines(self) -> Iterator[dict[str, Any]]:
        """The lines after the header of the log being resumed, each checked (none
        for a new search); a damaged line is a one-line `UsageError` naming it."""
        if not self._resuming:
            return
        header_checked = False
        try:
            with LogFile(self.log) as log:
                for checked in log:
                    if checked.line is None:
                        raise UsageError(self._damaged(checked))
                    if not header_checked:  # before any run is replayed
                        self._check_header(log.header)
                        header_checked = True
                    yield checked.line
                self._check_header(log.header)
                self._keep = log.whole_bytes
        except NotRegular as exc:
            raise UsageError(f"{exc}; move it away, or choose another --out") from None
        except OSError as exc:
            raise UsageError(f"cannot read {self.log}: {exc.strerror or exc}") from None

    def _damaged(self, checked: Checked) -> str:
        return (
            f"{self.log}:{checked.number}: {checked.problem}; the search cannot go on from "
            "a damaged log: move it away (or choose another --out) and start again"
        )

    def _check_header(self, recorded: dict[str, Any] | None) -> None:
        if recorded is None:
            raise UsageError(
                f"{self.log} has no complete header line: not a seedbed explore log; move it "
                "away, or choose another --out"
            )
        differ = [key for key in self.header if recorded.get(key) != self.header[key]]
        if differ:
            told = ", ".join(f"{key} {_short(recorded.get(key))}, not {_short(self.header[key])}"
                             for key in differ)  # fmt: skip
            raise UsageError(f"--resume: {self.log} was a search with {told}; give the same ones")

    def start(self) -> None:
        """Open the log for appending: a resumed one cut back to its last whole
        line (a kill's torn line goes), a new one begun with its header."""
        self._writer = ResultsWriter(self.log, keep_bytes=self._keep)
        if self._keep is None:
            self._writer.append(self.header)

    def append(self, line: dict[str, Any]) -> None:
        """Write one line, on disk before the search goes on (an `OSError` naming the log)."""
        assert self._writer is not None, "start() first"
        self._writer.append(line)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def write_choices(self, folder: str, index: int, seed: int, chosen: Sequence[Choice],
                      failure: dict[str, Any] | None) -> str:  # fmt: skip
        """Write a run's choice file under `folder`; its path (as the user can paste it)."""
        (self.out / folder).mkdir(parents=True, exist_ok=True)
        path = self.out / folder / f"run-{index}.json"
        options = {k: v for k, v in self.header["options"].items() if k in RUN_OPTIONS}
        write_choices(path, ChoiceFile(self.header["target"], seed, list(chosen), options, failure))
        return str(path)

    def stored(self, index: int, order: Order) -> StoredChoices:
        """Run `index`'s corpus entry's choices, read from its file when looked at."""
        return StoredChoices(self.cache, index, order)

    def _read_entry(self, index: int, order: Order) -> list[Choice]:
        """A corpus entry's choices, in the draw order the run made them. The file is
        the one this folder holds for the run, whatever path its line recorded."""
        path = self.out / CORPUS / f"run-{index}.json"
        try:
            return interleaved(read_choices(path, self.header["target"]).choices, order)
        except UsageError as exc:
            raise UsageError(f"corpus entry {path}: {exc}; the search needs its corpus as it "
                             "left it: start again with another --out") from None  # fmt: skip


def _holds_a_log(log: Path) -> bool:
    """Whether a log with anything in it is there; a FIFO, device or folder is refused."""
    try:
        regular_file(log)
        return log.stat().st_size > 0
    except NotRegular as exc:
        raise UsageError(f"{exc}; move it away, or choose another --out") from None
    except FileNotFoundError:
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."


def order_of(chosen: Sequence[Choice]) -> list[list[int]]:
    """How the streams interleave: [stream number, draws in a row] pairs, streams
    numbered in their first-draw order (the order a choice file lists them)."""
    numbers = {name: number for number, name in enumerate(by_stream(chosen))}
    runs: list[list[int]] = []
    for choice in sorted(chosen, key=lambda c: c.order):
        number = numbers[choice.stream]
        if runs and runs[-1][0] == number:
            runs[-1][1] += 1
        else:
            runs.append([number, 1])
    return runs


def interleaved(chosen: Sequence[Choice], order: Sequence[Sequence[int]]) -> list[Choice]:
    """The choices of a file (stream after stream) put back in draw order."""
    streams = list(by_stream(chosen))
    pending: dict[str, list[Choice]] = {}
    for choice in chosen:
        pending.setdefault(choice.stream, []).append(choice)
    at = dict.fromkeys(streams, 0)
    out: list[Choice] = []
    for number, count in order:
        if not 0 <= number < len(streams):
            raise UsageError("its line's draw order names a stream the file lacks")
        name = streams[number]
        for choice in pending[name][at[name] : at[name] + count]:
            out.append(Choice(choice.stream, choice.reason, choice.value, len(out)))
        at[name] += count
    if len(out) != len(chosen):
        raise UsageError("its line's draw order does not match the file's draws")
    return out
