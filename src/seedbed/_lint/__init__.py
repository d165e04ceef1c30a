"""`seedbed lint`: find, before any run, the code that would make a run nondeterministic.

seedbed virtualizes the clocks and the entropy *during* a run and turns
threads, processes and sockets into `SimulationEscape`. What it cannot see is
a value read before the run (at import time, in a default or a class
attribute), a generator seeded from the machine, or an order set by hashing
or memory addresses. This checker reads the source (standard library `ast`
only, nothing is imported or run) and reports each such use with its place,
a rule code and the fix; `_rules` is the table of rules.

    from seedbed._lint import lint_paths, lint_source
    for finding in lint_paths(["src/"]):
        print(finding)   # path:line:col: CODE message (fix: ...)

A line ending in `# seedbed: allow <why>` is exempt.
"""

from __future__ import annotations

from seedbed._lint._checker import Finding
from seedbed._lint._rules import RULES, Rule, rules
from seedbed._lint._run import LintError, lint_paths, lint_source, python_files

__all__ = [
    "RULES",
    "Finding",
    "LintError",
    "Rule",
    "lint_paths",
    "lint_source",
    "python_files",
    "rules",
]
