"""Every Python and shell example in docs/ runs, so no example can rot.

One test per page: its examples run in order, in one namespace (a later
block may use what an earlier one defined, as a reader would), in a fresh
working directory where `examples/` is the repository's and `seedbed/` a
clone of it. A ```python block
runs in this process; a ```sh block runs in bash, line by line, and each
command must exit 0 unless its line ends in `# exits N`. A block after
`<!-- skip: next "why" -->` is not run: only commands that take minutes
(a sweep of hundreds of seeds) or start servers that run until killed are
marked so, and the reason is on the page. Output blocks (```text) are shown,
not run.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import unittest
from pathlib import Path

import pytest
from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
HEREDOC = re.compile(r"<<-?'?(\w+)'?\s*$")
EXPECTED_EXIT = re.compile(r"#\s*exits (\d+)\b")
SHELL_TIMEOUT = 300  # seconds for one block: a guard against a hang, not a speed target


def run_shell(example: Example) -> None:
    """Run a ```sh block; a command exiting otherwise than its line says fails the page."""
    script = _checked_script(str(example.parsed))
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=SHELL_TIMEOUT,
        env={**os.environ, "PYTHONHASHSEED": "0"}, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(
            f"{example.path}:{example.line}: a shell example failed\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )


def _checked_script(block: str) -> str:
    """The block as one bash script that checks each command's exit status."""
    lines: list[str] = []
    for number, command in enumerate(_commands(block), 1):
        expected = EXPECTED_EXIT.search(command)
        code = int(expected.group(1)) if expected else 0
        lines.append(command)
        lines.append(
            f'rc=$?; if [ "$rc" != {code} ]; then '
            f'echo "command {number} exited $rc, not {code}: {_quoted(command)}" >&2; exit 97; fi'
        )
    return "\n".join(lines)


def _commands(block: str) -> list[str]:
    """The block's commands: a `\\` continuation joined to its line, a here-document
    (`<<'EOF'` ... `EOF`) kept with its command, comments dropped."""
    commands: list[str] = []
    pending = ""
    heredoc = ""
    for line in block.splitlines():
        if heredoc:
            pending += line + "\n"
            if line == heredoc:
                commands.append(pending.rstrip("\n"))
                pending = heredoc = ""
            continue
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        opened = HEREDOC.search(line)
        if opened:
            heredoc = opened.group(1)
            pending += line + "\n"
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append(pending + line)
        pending = ""
    return commands


def _quoted(command: str) -> str:
    return command.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")


SYBIL = Sybil(
    parsers=[PythonCodeBlockParser(), CodeBlockParser("sh", run_shell), SkipParser()],
)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_every_example_on_the_page_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "examples").symlink_to(REPO / "examples")
    (tmp_path / "seedbed").symlink_to(REPO)  # a clone beside the reader's project
    monkeypatch.chdir(tmp_path)
    document = SYBIL.parse(page)
    policy = asyncio.get_event_loop_policy()  # a page may install seedbed's, as users do
    try:
        for example in document:
            try:
                example.evaluate()
            except unittest.SkipTest as why:  # a marked block: the page says why it is not run
                assert str(why).strip(), f"{page}:{example.line}: skipped without a reason"
    finally:
        asyncio.set_event_loop_policy(policy)  # later tests (and Playwright) get stock loops


def test_a_shell_command_that_exits_otherwise_fails_its_page() -> None:
    """The checker itself: an unexpected status fails, an expected one passes."""
    ok = subprocess.run(["bash", "-c", _checked_script("false  # exits 1\ntrue")], check=False)
    assert ok.returncode == 0
    bad = subprocess.run(["bash", "-c", _checked_script("true\nfalse\ntrue")],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert bad.returncode == 97 and "command 2 exited 1, not 0: false" in bad.stderr
    here = _checked_script("cat > f.txt <<'EOF'\nfalse\nEOF\ngrep -q false f.txt")
    assert here.count("rc=$?") == 2  # the document's lines are data, not commands
