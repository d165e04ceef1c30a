"""The README: short, its test command the one CI runs, its links alive."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = "pip install uv && PYTHONHASHSEED=0 uv run --locked pytest -n 2"
MAIN_JOB = (
    "pip install uv && uv run --no-dev seedbed sweep examples.kvstore.scenarios:swarm --seeds 200"
)


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(README.splitlines()) <= 200


def test_its_two_commands_are_there_and_ci_runs_the_test_command() -> None:
    assert MAIN_JOB in README.splitlines()
    assert TEST_COMMAND in README.splitlines()
    assert TEST_COMMAND in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_every_link_into_the_repository_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the docs"
    missing = [link for link in local if not (REPO / link).exists()]
    assert not missing, missing
