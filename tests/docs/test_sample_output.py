"""The output the docs quote is the output seedbed prints (issue 43).

A page quotes a command's output in a ```text block preceded by
`<!-- output of: COMMAND -->`. This runs COMMAND (its stdout and stderr
together, from a directory where `examples/` is the repository's, as the
docs' examples run) and checks the block against it: the block is an
excerpt, its lines consecutive lines of the output (its first anywhere). A
line `...` stands for lines left out, and `…` inside a line for text left
out there (a sweep's timing, how the command was started). A page
whose report drifted from what seedbed prints fails here, not in a reader's
terminal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!-- output of: (?P<command>.+?) -->\s*\n```text\n(?P<block>.*?)\n```", re.S)
QUOTED = [
    (page, found["command"], found["block"])
    for page in sorted((REPO / "docs").rglob("*.md"))
    for found in MARKER.finditer(page.read_text(encoding="utf-8"))
]


def matches(block: str, output: str) -> str | None:
    """None if `block`'s lines are consecutive lines of `output`, the first one
    anywhere (`...` lines skip any, `…` matches any text within a line); else
    what went wrong."""
    lines = output.splitlines()
    at, skipping = 0, True
    for wanted in block.splitlines():
        if wanted.strip() == "...":
            skipping = True
            continue
        pattern = re.compile(".*?".join(re.escape(part) for part in wanted.split("…")) + r"\Z")
        while at < len(lines) and not pattern.match(lines[at]):
            if not skipping:
                return f"expected {wanted!r}, got {lines[at]!r}"
            at += 1
        if at == len(lines):
            return f"expected {wanted!r}: not in the output (or out of order)"
        at, skipping = at + 1, False
    return None


@pytest.mark.parametrize(
    ("page", "command", "block"), QUOTED,
    ids=[f"{page.relative_to(REPO / 'docs')}: {command}" for page, command, _ in QUOTED],
)  # fmt: skip
def test_a_quoted_output_is_what_the_command_prints(
    page: Path, command: str, block: str, tmp_path: Path
) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    environment.pop("SEEDBED_REEXEC", None)
    words = command.split()
    assert words[0] == "seedbed", f"{page}: quote the output of a seedbed command"
    done = subprocess.run([sys.executable, "-m", "seedbed", *words[1:]], cwd=tmp_path,
                          env=environment, capture_output=True, text=True, check=False,
                          timeout=300)  # fmt: skip
    wrong = matches(block, done.stdout + done.stderr)
    assert wrong is None, f"{page}: the output of `{command}` changed: {wrong}"


def test_the_matcher_skips_only_where_told() -> None:
    output = "a\nb 1.2 s\nc\nd"
    assert matches("a\n...\nd", output) is None
    assert matches("b … s\nc", output) is None  # an excerpt may start anywhere
    assert matches("a\nc", output) is not None  # a line left out without `...`
    assert matches("a\n...\nz", output) is not None
    assert matches("c\nb … s", output) is not None  # out of order


def test_every_page_that_quotes_a_report_is_checked() -> None:
    quoting = {page for page, _, _ in QUOTED}
    for name in ("how-to/read-a-failure.md", "tutorials/planted-bug.md"):
        assert REPO / "docs" / name in quoting
