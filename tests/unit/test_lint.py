"""`seedbed lint`: each banned use found where it is, nothing reported on correct code.

The fixtures under `lint_cases/` are read, never imported: `banned.py` marks
every line that must produce findings with `# expect: CODE...`, and the test
asserts the exact multiset of (line, code); `clean.py` is correct code
(idiomatic asyncio included) that must produce nothing.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedbed._lint import RULES, LintError, lint_paths, lint_source
from seedbed.cli._lint import lint

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "lint_cases"
_EXPECT = re.compile(r"# expect:\s*(?P<codes>.*)$")


def _expected(path: Path) -> Counter[tuple[int, str]]:
    expected: Counter[tuple[int, str]] = Counter()
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and (match := _EXPECT.search(token.string)):
            for code in match.group("codes").split():
                expected[(token.start[0], code)] += 1
    return expected


def _found(findings: list[object]) -> Counter[tuple[int, str]]:
    return Counter((f.line, f.code) for f in findings)  # type: ignore[attr-defined]


# -- the fixtures --------------------------------------------------------------


def test_every_banned_use_in_the_fixture_is_found_and_nothing_else() -> None:
    path = CASES / "banned.py"
    expected = _expected(path)
    found = _found(lint_paths([path]))
    assert sorted((found - expected).elements()) == [], "reported but not expected"
    assert sorted((expected - found).elements()) == [], "expected but not reported"


def test_the_fixture_has_at_least_thirty_cases_and_covers_every_rule() -> None:
    expected = _expected(CASES / "banned.py")
    assert len({line for line, _ in expected}) >= 30
    assert {code for _, code in expected} == set(RULES)


def test_correct_code_and_idiomatic_asyncio_produce_nothing() -> None:
    assert lint_paths([CASES / "clean.py"]) == []


def test_seedbeds_own_examples_are_clean() -> None:
    assert [str(f) for f in lint_paths([REPO / "examples"])] == []


# -- what a finding says ---------------------------------------------------------


def test_a_finding_names_its_place_its_rule_and_the_fix() -> None:
    [finding] = lint_source("import time\n\nSTART = time.time()\n", "app.py")
    assert (finding.path, finding.line, finding.col, finding.code) == ("app.py", 3, 9, "SB101")
    assert finding.fix == RULES["SB101"].fix
    assert str(finding) == (
        f"app.py:3:9: SB101 time.time() is read once, at import time (fix: {RULES['SB101'].fix})"
    )


def test_columns_count_characters_not_utf8_bytes() -> None:
    [finding] = lint_source('import time\nNAME, T = "état", time.time()\n', "app.py")
    assert finding.col == len('NAME, T = "état", ') + 1


@pytest.mark.parametrize(
    "source",
    [
        "from time import time as now\nX = now()\n",
        "import time as t\nX = t.time()\n",
        "import datetime as dt\nX = dt.datetime.now()\n",
        "from datetime import datetime\nX = datetime.now()\n",
        "def f():\n    import time as clock\n\nX = clock.time()\n",
    ],
)
def test_aliases_resolve_to_the_clock_they_name(source: str) -> None:
    assert [f.code for f in lint_source(source)] == ["SB101"]


def test_a_local_name_that_only_looks_like_a_module_is_not_a_clock() -> None:
    source = "class time:\n    @staticmethod\n    def time(): return 0\n\nX = time.time()\n"
    assert lint_source(source) == []


def test_the_same_read_inside_a_function_is_virtualized_and_not_reported() -> None:
    assert lint_source("import time\n\ndef f():\n    return time.time()\n") == []
    inner_default = "import time\n\ndef f():\n    def g(t=time.time()):\n        return t\n"
    assert lint_source(inner_default) == []  # the default is evaluated when f runs


# -- pragmas ---------------------------------------------------------------------


def test_a_pragma_with_a_reason_suppresses_its_line_only() -> None:
    source = (
        "import time\n"
        "A = time.time()  # seedbed: allow the build stamp, never compared\n"
        "B = time.time()\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(3, "SB101")]


def test_a_pragma_without_a_reason_suppresses_nothing_and_is_reported() -> None:
    source = "import time\nA = time.time()  # seedbed: allow\n"
    found = lint_source(source)
    assert [(f.line, f.code) for f in found] == [(2, "SB101"), (2, "SB501")]
    assert found[1].col == len("A = time.time()  ") + 1


def test_a_pragma_that_suppresses_nothing_is_reported() -> None:
    found = lint_source("X = 1  # seedbed: allow it used to read the clock\n")
    assert [f.code for f in found] == ["SB502"]


def test_a_pragma_in_a_string_is_not_a_pragma() -> None:
    source = 'import time\nA = (time.time(), "# seedbed: allow nope")\n'
    assert [f.code for f in lint_source(source)] == ["SB101"]


# -- sets ------------------------------------------------------------------------


def test_hash_and_id_as_keys_or_in_repr_are_fine_as_data_they_are_not() -> None:
    source = (
        "class A:\n"
        "    def __hash__(self): return hash((1, 2)) ^ 3\n"
        "    def __repr__(self): return f'<A at {id(self):#x}>'\n"
        "def f(xs):\n"
        "    seen = {id(x): x for x in xs}\n"
        "    key = (hash(tuple(xs)), 1)\n"
        "    return seen, key, hash(xs[0]) & 7, print(id(xs))\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(7, "SB402"), (7, "SB403")]


def test_sets_of_ints_and_tasks_iterate_the_same_everywhere() -> None:
    source = (
        "import asyncio\n"
        "def f(ports: set[int], tasks: set[asyncio.Task[None]], names: set[str]):\n"
        "    for p in ports: pass\n"
        "    for t in tasks: pass\n"
        "    for n in names: pass\n"
        "    for i in {1, 2}: pass\n"
    )
    assert [(f.line, f.code) for f in lint_source(source)] == [(5, "SB411")]


def test_order_free_consumers_of_a_set_are_fine() -> None:
    source = (
        "def f(names):\n"
        "    s = set(names)\n"
        "    return sorted(s), len(s), min(s), any(x for x in s), set(x for x in s), 'a' in s\n"
        "def g(fds: set[str]):\n"
        "    return tuple(sorted(map(int, fds))), sorted([x for x in fds]), {y for y in list(fds)}"
    )
    assert lint_source(source) == []


# -- bad input ---------------------------------------------------------------------


def test_a_file_that_does_not_parse_is_bad_input_naming_where() -> None:
    with pytest.raises(LintError, match=r"^broken\.py:2:\d+: cannot parse it"):
        lint_source("x = 1\ndef (:\n", "broken.py")


def test_a_missing_path_is_bad_input() -> None:
    with pytest.raises(LintError, match="no such file or directory"):
        lint_paths(["does/not/exist.py"])


# -- the command -------------------------------------------------------------------


def _lint(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(lint, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_the_command_exits_zero_on_clean_code(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("import time\n\ndef f():\n    return time.time()\n")
    code, out, _ = _lint(str(tmp_path))
    assert (code, out) == (0, "no findings in 1 file\n")


def test_the_command_exits_one_with_a_line_per_finding(tmp_path: Path) -> None:
    bad = tmp_path / "pkg" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("import time\nX = time.time()\ntime.sleep(1)\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "skipped.py").write_text("import time\nX = time.time()\n")
    code, out, _ = _lint(str(tmp_path))
    lines = out.splitlines()
    assert code == 1
    assert lines == [
        f"{bad}:2:5: SB101 time.time() is read once, at import time (fix: {RULES['SB101'].fix})",
        f"{bad}:3:1: SB304 time.sleep() blocks in real time (fix: {RULES['SB304'].fix})",
        "2 findings in 1 file",
    ]


def test_a_symlink_back_up_the_tree_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "ok.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path)
    assert _lint(str(tmp_path)) == (0, "no findings in 1 file\n", "")


def test_json_output_is_one_object_with_the_findings(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import random\nR = random.Random()\n")
    code, out, _ = _lint("--json", str(bad))
    record = json.loads(out)
    assert code == 1
    assert record == {
        "files": 1,
        "count": 1,
        "findings": [
            {"path": str(bad), "line": 2, "col": 5, "code": "SB201",
             "message": "random.Random() has no seed", "fix": RULES["SB201"].fix},
        ],
    }  # fmt: skip
    ok = tmp_path / "ok.py"
    ok.write_text("x = 1\n")
    assert json.loads(_lint("--json", str(ok))[1]) == {"files": 1, "count": 0, "findings": []}


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        ({}, ["missing.py"], "error: missing.py: no such file or directory"),
        ({"bad.py": "def (:\n"}, ["bad.py"], "error: bad.py:1:5: cannot parse it"),
        ({"empty/notes.txt": "hi"}, ["empty"], "error: empty: no *.py files"),
        ({"latin.py": b"x = '\xe9'\n"}, ["latin.py"], "error: latin.py: cannot read it"),
    ],
)
def test_bad_input_exits_two_with_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str | bytes],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        else:
            (tmp_path / name).write_text(content)
    code, out, err = _lint(*args)
    assert code == 2
    assert out == ""
    assert err.startswith(message), err
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_seedbed_lint_is_a_command_of_seedbed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "seedbed", "lint", "examples"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("no findings in ")


def test_the_docs_document_every_rule() -> None:
    section = (REPO / "docs" / "reference" / "lint-rules.md").read_text()
    for code in RULES:
        assert f"| {code} |" in section, code
    assert "# seedbed: allow" in section
    assert "flake8-tidy-imports.banned-api" in section
