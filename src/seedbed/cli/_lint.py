"""The `seedbed lint PATH...` command.

Exit codes as everywhere in the CLI: 0 no findings, 1 findings (one line
each, `path:line:col: CODE message (fix: ...)`, or one JSON object with
`--json`), 2 bad input (a path that does not exist, a file that does not
parse), with one line on stderr naming the path and what to do.
"""

from __future__ import annotations

import json
import sys

import click

from seedbed._lint._run import LintError, lint_source, python_files, read_source
from seedbed.cli._guard import echo


@click.command("lint")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="print one JSON object with the findings")
def lint(paths: tuple[str, ...], as_json: bool) -> None:
    """Find code in PATHS (files, or directories of *.py) that would make a
    simulated run nondeterministic or escape the simulation.

    A line ending in `# seedbed: allow <why>` is exempt. The rules and their
    fixes: docs/reference/lint-rules.md.
    """
    try:
        files = python_files(paths)
        findings = [f for path in files for f in lint_source(read_source(path), str(path))]
    except LintError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        record = {
            "files": len(files),
            "count": len(findings),
            "findings": [f.to_dict() for f in findings],
        }
        echo(json.dumps(record, sort_keys=True))
    else:
        for finding in findings:
            echo(str(finding))
        where = f"{len(files)} file{'s' if len(files) != 1 else ''}"
        verdict = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
        echo(f"{verdict} in {where}" if findings else f"no findings in {where}")
    sys.exit(1 if findings else 0)
