"""Choice files: a run's labelled draws as JSON, to replay with `--choices`.

    {"kind": "seedbed choices", "version": 1, "target": "pkg.mod:name",
     "seed": 7, "options": {"explore_tasks": true},
     "failure": {"error_type": "...", "bucket": "...", "message": "..."},
     "digest": "16 hex digits",
     "streams": {"nemesis": [["nemesis: time to next fault", 0.25], ...], ...}}

`streams` holds, per entropy stream, its draws in order as [reason, value]
pairs; `digest` is `tracefile.header_digest` of the fields before it, so a
damaged header is refused (files from before it have none, and still read).
A value is a number, a string (an order "2,0,1", raw bits "0x...") or
null (the quiet default). Never pickled; every defect of a file read back is
a one-line `UsageError` naming the file and what to do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seedbed._core.choices import Choice, by_stream, from_streams
from seedbed._core.files import NotRegular, WriteFailed, regular_file, replace_file
from seedbed._core.safejson import BadJSON, loads
from seedbed._core.tracefile import header_digest
from seedbed.errors import UsageError

KIND = "seedbed choices"
VERSION = 1
MAX_BYTES = 256 * 1024 * 1024
RUN_OPTIONS = ("max_steps", "max_time", "strict", "explore_tasks", "clock_resolution",
               "strategy", "pct_depth")  # fmt: skip


@dataclass
class ChoiceFile:
    """What a choice file holds."""

    target: str
    seed: int
    choices: list[Choice]
    options: dict[str, Any] = field(default_factory=dict)
    failure: dict[str, Any] | None = None


def write_choices(path: str | Path, saved: ChoiceFile) -> None:
    """Write `saved` to `path` (an `OSError` if it cannot be written)."""
    text = choices_text(saved)
    try:  # through a temporary file: a full disk leaves neither an empty nor a cut file
        replace_file(path, text.encode("utf-8"))
    except NotRegular:
        raise
    except OSError as exc:
        raise WriteFailed(path, "the choice file", exc) from None


def choices_text(saved: ChoiceFile) -> str:
    """`saved` as a choice file's text: its header, then a draw a line."""
    header = {
        "kind": KIND,
        "version": VERSION,
        "target": saved.target,
        "seed": saved.seed,
        "options": saved.options,
        "failure": saved.failure,
    }
    header["digest"] = header_digest(header)
    lines = [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in header.items()]
    streams = []
    for name, pairs in by_stream(saved.choices).items():  # a draw a line: easy to read, diff, edit
        rows = ",\n".join(f"   {json.dumps(pair, allow_nan=False)}" for pair in pairs)
        streams.append(f"  {json.dumps(name)}: [\n{rows}\n  ]")
    return "{\n" + "\n".join(lines) + '\n "streams": {\n' + ",\n".join(streams) + "\n }\n}\n"


def read_choices(path: str | Path, target: str) -> ChoiceFile:
    """A choice file recorded for `target`; anything else is a one-line `UsageError`."""
    where = f"choices file {str(path)!r}"
    try:
        regular_file(path)
        with open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except NotRegular as exc:
        raise UsageError(f"{where}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {where}: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise UsageError(f"{where} is larger than {MAX_BYTES >> 20} MB: not a choice file")
    try:
        document = loads(raw.decode("utf-8"), allow_nan=False)
    except UnicodeDecodeError:
        raise UsageError(f"{where} is not UTF-8 text: write it with `seedbed shrink`") from None
    except BadJSON as exc:
        raise UsageError(f"{where}: {exc}; write it with `seedbed shrink`") from None
    return _check(where, document, target)


def _check(where: str, document: Any, target: str) -> ChoiceFile:
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise UsageError(f'{where} is not a seedbed choice file (no "kind": {KIND!r})')
    version = document.get("version")
    if version != VERSION:
        raise UsageError(
            f"{where} is version {version!r}; this seedbed reads version {VERSION}: "
            "shrink the failure again with this version"
        )
    digest = document.get("digest")
    if digest is not None and digest != header_digest(_header_of(document)):
        raise UsageError(
            f"{where}: its header does not match its digest (it was edited or damaged): "
            "shrink the failure again"
        )
    recorded = document.get("target")
    if recorded != target:
        raise UsageError(
            f"{where} was recorded for target {recorded!r}, not {target!r}: run it with that target"
        )
    seed = document.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f'{where}: "seed" must be a non-negative integer, got {seed!r}')
    options = document.get("options", {})
    if not isinstance(options, dict) or any(key not in RUN_OPTIONS for key in options):
        raise UsageError(f"{where}: \"options\" must be an object with keys among "
                         f"{', '.join(RUN_OPTIONS)}, got {_short(options)}")  # fmt: skip
    failure = document.get("failure")
    if failure is not None and not isinstance(failure, dict):
        raise UsageError(f'{where}: "failure" must be an object or null')
    return ChoiceFile(target, seed, from_streams(_streams(where, document)), options, failure)


def _header_of(document: dict[str, Any]) -> dict[str, Any]:
    keys = ("kind", "version", "target", "seed", "options", "failure")
    return {key: document.get(key) for key in keys}


def _streams(where: str, document: dict[str, Any]) -> dict[str, list[list[Any]]]:
    streams = document.get("streams")
    if not isinstance(streams, dict):
        raise UsageError(f'{where}: "streams" must be an object of stream name -> draws')
    for name, pairs in streams.items():
        if not isinstance(pairs, list):
            raise UsageError(f"{where}: stream {name!r} must be a list of [reason, value] pairs")
        for index, pair in enumerate(pairs):
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and isinstance(pair[0], str)
                and (pair[1] is None or isinstance(pair[1], int | float | str))
                and not isinstance(pair[1], bool)
            ):
                raise UsageError(
                    f"{where}: stream {name!r} draw {index} must be [reason, number|string|null], "
                    f"got {_short(pair)}"
                )
    return streams


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
