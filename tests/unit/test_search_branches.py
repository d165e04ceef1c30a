"""`seedbed explore --branches PACKAGE`: branch coverage through sys.monitoring.

Off by default; on 3.11 a one-line error saying it needs 3.12. On 3.12+ a
run's features include each branch direction it took in the package, and
only there, the same whatever ran before in the process (a worker's
earlier runs disabled events that each run turns on again).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedbed._harness.search import ExploreSpec, explore
from seedbed._harness.search._execute import execute
from seedbed._harness.search._plan import Plan
from seedbed._harness.targets import resolve
from seedbed.cli import cli
from seedbed.errors import UsageError

LAG = "examples.rare:lag"
NEEDS_312 = pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is 3.12+")


def _branches(result: dict[str, object]) -> list[str]:
    features = result["features"]
    assert isinstance(features, list)
    return [f for f in features if f.startswith("branch: ")]


def test_branch_coverage_is_off_by_default() -> None:
    assert _branches(execute(resolve(LAG), Plan(0, 3, "fresh"), None, {})) == []


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ has sys.monitoring")
def test_on_3_11_it_says_in_one_line_that_it_needs_3_12(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--branches needs Python 3\.12 or later"):
        explore(ExploreSpec(LAG, tmp_path / "a", runs=2, branches=("examples.rare",)))
    ran = CliRunner().invoke(cli, ["explore", LAG, "--runs", "2", "--branches", "examples",
                                   "--out", str(tmp_path / "b")])  # fmt: skip
    assert ran.exit_code == 2
    assert ran.output.strip().splitlines() == [
        f"error: --branches needs Python 3.12 or later (sys.monitoring); "
        f"this is {'.'.join(map(str, sys.version_info[:3]))}"
    ]


@NEEDS_312
def test_the_branches_a_run_took_in_the_package_are_its_features() -> None:
    obj = resolve(LAG)
    first = _branches(execute(obj, Plan(0, 3, "fresh"), None, {}, branches=("examples.rare",)))
    again = _branches(execute(obj, Plan(0, 3, "fresh"), None, {}, branches=("examples.rare",)))
    assert first == again  # the second run's events were disabled by the first: restarted
    assert first and all(f.startswith("branch: rare.py:") for f in first)
    lines = {f.split(":")[2].split("->")[0] for f in first}
    assert any(sum(f.startswith(f"branch: rare.py:{n}->") for f in first) == 2 for n in lines)
    elsewhere = execute(obj, Plan(0, 3, "fresh"), None, {}, branches=("email",))
    assert _branches(elsewhere) == []  # only the chosen package's branches count


@NEEDS_312
def test_a_package_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--branches no_such_pkg: no such importable"):
        explore(ExploreSpec(LAG, tmp_path, runs=2, branches=("no_such_pkg",)))
