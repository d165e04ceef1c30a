"""The search on disk, written as it goes: `--resume` continues from it.

    OUT/explore.jsonl        a header line, then one line per finished run
    OUT/corpus/run-N.json    the choice file of each run kept in the corpus
    OUT/failures/run-N.json  the choice file of each failure identity's first run
    OUT/sweep/               with --versus-sweep: a plain sweep of as many runs, kept
                             the same way (its header says "plain")

Choice files are the shrinker's (`seedbed run TARGET --choices FILE` replays
one, `seedbed shrink TARGET --choices FILE` shrinks it). A file keeps each
stream's draws but not how the streams interleave, which a branch's prefix
needs: a corpus line keeps that order, run-length encoded. A file is written
before the line that names it, and every line is flushed, so a killed search
loses only the runs not yet written; a torn last line is dropped on resume.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seedbed._core.choices import Choice, by_stream
from seedbed._core.safejson import BadJSON, loads
from seedbed._harness.search._plan import BATCH
from seedbed._harness.shrink._file import RUN_OPTIONS, ChoiceFile, read_choices, write_choices
from seedbed.errors import UsageError

KIND = "seedbed explore"
VERSION = 2  # 2: follow-ups and strikes (a version-1 log is refused on --resume)
LOG = "explore.jsonl"


SWEEP = "sweep"  # OUT/sweep/: a plain sweep of the same runs, for the report to compare


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
    """One search's folder."""

    def __init__(self, out: Path, header: dict[str, Any], resume: bool) -> None:
        self.out = out
        self.header = header
        self.log = out / LOG
        self.lines: list[dict[str, Any]] = []
        if self.log.exists():
            if not resume:
                raise UsageError(f"{self.log} holds a search already: pass --resume to "
                                 "continue it, or choose another --out")  # fmt: skip
            self.lines = self._read()
        else:
            out.mkdir(parents=True, exist_ok=True)
            self._write_line(header)

    def _read(self) -> list[dict[str, Any]]:
        text = self.log.read_text(encoding="utf-8")
        rows = text.split("\n")
        if text and not text.endswith("\n"):
            rows = rows[:-1]  # the line a kill tore: its run is run again
            self.log.write_text("\n".join(rows) + "\n", encoding="utf-8")
        parsed = []
        for number, row in enumerate(rows, 1):
            if row.strip():
                try:
                    parsed.append(loads(row))
                except BadJSON as exc:
                    raise UsageError(f"{self.log} line {number}: {exc}") from None
        if not parsed or parsed[0].get("kind") != KIND:
            raise UsageError(f"{self.log} is not a seedbed explore log; choose another --out")
        recorded = {k: parsed[0].get(k) for k in self.header}
        if recorded != self.header:
            differ = [k for k in self.header if recorded[k] != self.header[k]]
            told = ", ".join(f"{k} {recorded[k]!r}, not {self.header[k]!r}" for k in differ)
            raise UsageError(f"--resume: {self.log} was a search with {told}; give the same ones")
        return parsed[1:]

    def _write_line(self, line: dict[str, Any]) -> None:
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, allow_nan=False) + "\n")
            handle.flush()

    def append(self, line: dict[str, Any]) -> None:
        self._write_line(line)
        self.lines.append(line)

    def write_choices(self, folder: str, index: int, seed: int, chosen: Sequence[Choice],
                      failure: dict[str, Any] | None) -> str:  # fmt: skip
        """Write a run's choice file under `folder`; its path (as the user can paste it)."""
        (self.out / folder).mkdir(parents=True, exist_ok=True)
        path = self.out / folder / f"run-{index}.json"
        options = {k: v for k, v in self.header["options"].items() if k in RUN_OPTIONS}
        write_choices(path, ChoiceFile(self.header["target"], seed, list(chosen), options, failure))
        return str(path)

    def read_entry(self, line: dict[str, Any]) -> list[Choice]:
        """A corpus line's choices, in the draw order the run made them."""
        saved = read_choices(line["entry"], self.header["target"])
        return interleaved(saved.choices, line.get("order") or [])


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
            raise UsageError("a corpus line's draw order names a stream its file lacks")
        name = streams[number]
        for choice in pending[name][at[name] : at[name] + count]:
            out.append(Choice(choice.stream, choice.reason, choice.value, len(out)))
        at[name] += count
    if len(out) != len(chosen):
        raise UsageError("a corpus line's draw order does not match its choice file")
    return out
