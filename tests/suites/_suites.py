"""Fetch, install and run other projects' asyncio test suites on seedbed's loop.

Each library's own tests come from its sdist on PyPI (`pip download
--no-binary NAME --no-deps NAME==VERSION`), unpacked under `.cache/suites/`
(gitignored) and reused by later runs. A virtual environment per Python
version there gets the pinned library, pytest, pytest-asyncio and
pytest-timeout from PyPI (through `uv pip`), and seedbed from this checkout
(`PYTHONPATH`). The suite then runs in a subprocess with its own pytest
configuration (its `filterwarnings = error` included) minus its `addopts`
(coverage plugins we do not install), plus a root `conftest.py` that hands
pytest-asyncio seedbed's event loop policy: `seedbed_conftest.py`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "suites"
TOOLS = ("pytest==9.2.0", "pytest-asyncio==1.5.0", "pytest-timeout==2.4.0")
SEEDBED_DEPS = ("click>=8.1", "rich>=13", "greenlet>=3.0")
INSTALL_TIMEOUT = 300  # seconds for one download or install (a cold cache)
SUITE_TIMEOUT = 240  # seconds for one suite; each test is also limited by pytest-timeout


@dataclass(frozen=True)
class Library:
    """A library whose own test suite runs on seedbed's loop."""

    name: str  # on PyPI
    version: str
    tests: str  # the test directory inside the sdist
    test_deps: tuple[str, ...] = ()  # what its tests import besides pytest
    # test id -> (what its failure on seedbed's loop says, why it is excluded)
    excluded: dict[str, tuple[str, str]] = field(default_factory=dict)
    policy: bool = False  # its loops come from asyncio's policy, not pytest-asyncio
    # The upstream repository's pytest settings, for an sdist that ships none
    # (written as the sdist's pytest.ini; otherwise pytest would climb to ours).
    ini: str = ""
    options: tuple[str, ...] = ()  # more pytest options (how upstream collects)


@dataclass
class Outcome:
    passed: list[str]
    failed: dict[str, str]  # test id -> first line of the failure
    skipped: list[str]
    loops: int  # seedbed loops the suite created
    log: str
    on_loop: set[str] = field(default_factory=set)  # tests during which a seedbed loop ran


def _run(cmd: list[str], timeout: int, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        cmd, capture_output=True, text=True, check=False, timeout=timeout, **kwargs
    )


def _checked(done: subprocess.CompletedProcess[str], what: str) -> None:
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def sdist(lib: Library) -> Path:
    """`_sdist` under the cache's lock (pytest-xdist workers share the cache)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _sdist(lib)


def _sdist(lib: Library) -> Path:
    """The unpacked sdist of `lib`, downloaded once into the cache."""
    root = CACHE / "src" / f"{lib.name}-{lib.version}"
    if (root / lib.tests).is_dir():
        return root
    download = CACHE / "download"
    download.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", lib.name]
    if _run([sys.executable, "-m", "pip", "--version"], 60).returncode != 0:
        cmd = ["uvx", "pip", "download", "--no-deps", "--no-binary", lib.name]
    done = _run([*cmd, "-d", str(download), f"{lib.name}=={lib.version}"], INSTALL_TIMEOUT)
    _checked(done, f"downloading the sdist of {lib.name}")
    normalized = lib.name.replace("-", "_").lower()
    archive = next(
        p
        for p in download.iterdir()
        if p.name.lower().replace("-", "_").startswith(f"{normalized}_{lib.version}")
    )
    staging = CACHE / "src" / f".{lib.name}-{lib.version}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = staging.iterdir()
    shutil.rmtree(root, ignore_errors=True)
    top.rename(root)
    shutil.rmtree(staging)
    return root


def environment(libraries: list[Library], name: str = "venv") -> Path:
    """The interpreter of a venv holding the libraries and the test tools.

    `name` keeps apart venvs whose libraries' test dependencies differ (each
    rebuilt whenever its list changes). Built under a lock: pytest-xdist
    workers share the cache, and two building it at once remove each other's
    half-made venv."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _environment(libraries, name)


def _environment(libraries: list[Library], name: str) -> Path:
    tag = "-".join(map(str, sys.version_info[:3]))
    venv = CACHE / f"{name}-{tag}"
    python = venv / "bin" / "python"
    wanted = sorted(
        {*TOOLS, *SEEDBED_DEPS}
        | {f"{lib.name}=={lib.version}" for lib in libraries}
        | {dep for lib in libraries for dep in lib.test_deps}
    )
    stamp = venv / "seedbed-installed.txt"
    if stamp.is_file() and stamp.read_text() == "\n".join(wanted):
        return python
    shutil.rmtree(venv, ignore_errors=True)
    _checked(
        _run(["uv", "venv", "--python", sys.executable, str(venv)], INSTALL_TIMEOUT), "uv venv"
    )
    done = _run(["uv", "pip", "install", "--python", str(python), *wanted], INSTALL_TIMEOUT)
    _checked(done, "installing the libraries and test tools")
    stamp.write_text("\n".join(wanted))
    return python


def run_suite(
    lib: Library,
    python: Path,
    workdir: Path,
    excluded_only: bool = False,
    extra_env: dict[str, str] | None = None,
    timeout: int = SUITE_TIMEOUT,
) -> Outcome:
    """Run the library's suite on seedbed's loop; every excluded test deselected.

    Exclusions are exact test ids (all parameters of a test included). With
    `excluded_only`, run only the excluded tests instead. `extra_env` sets the
    conftest's other switches (`SEEDBED_SUITE_THREADS`, `SEEDBED_SUITE_STOCK`).
    """
    root = sdist(lib)
    shutil.copyfile(Path(__file__).with_name("seedbed_conftest.py"), root / "conftest.py")
    if lib.ini:
        (root / "pytest.ini").write_text(f"[pytest]\n{lib.ini}")
    tag = f"{lib.name}-excluded" if excluded_only else lib.name
    junit, loops = workdir / f"{tag}.xml", workdir / f"{tag}.loops"
    ran = workdir / f"{tag}.ran"
    cmd = [str(python), "-m", "pytest", lib.tests, "-p", "no:cacheprovider", "-q"]
    cmd += ["-o", "addopts=", "-o", "asyncio_default_fixture_loop_scope=function"]
    cmd += ["--timeout=60", f"--junitxml={junit}", f"--rootdir={root}", *lib.options]
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": str(REPO / "src"),
        "SEEDBED_SUITE_LOOPS": str(loops),
        "SEEDBED_SUITE_EXCLUDE": "\n".join(lib.excluded),
        "SEEDBED_SUITE_ONLY_EXCLUDED": "1" if excluded_only else "0",
        "SEEDBED_SUITE_POLICY": "1" if lib.policy else "0",
        "SEEDBED_SUITE_RAN": str(ran),
        **(extra_env or {}),
    }
    env.pop("PYTEST_ADDOPTS", None)
    done = _run(cmd, timeout, cwd=root, env=env)
    if not junit.is_file():
        raise RuntimeError(f"{lib.name}'s suite did not run:\n{done.stdout}\n{done.stderr}")
    outcome = _parse(junit, root)
    outcome.loops = int(loops.read_text()) if loops.is_file() else 0
    outcome.log = done.stdout[-4000:] + done.stderr[-2000:]
    if ran.is_file():
        outcome.on_loop = set(ran.read_text().splitlines())
    return outcome


def _parse(junit: Path, root: Path) -> Outcome:
    outcome = Outcome([], {}, [], 0, "")
    for case in ET.parse(junit).getroot().iter("testcase"):
        test_id = _test_id(case, root)
        problem = next((c for c in case if c.tag in ("failure", "error")), None)
        if problem is not None:
            lines = (problem.get("message") or problem.text or problem.tag).strip().splitlines()
            outcome.failed[test_id] = lines[0] if lines else problem.tag
        elif any(c.tag == "skipped" for c in case):
            outcome.skipped.append(test_id)
        else:
            outcome.passed.append(test_id)
    return outcome


def _test_id(case: ET.Element, root: Path) -> str:
    """`tests/test_x.py::Class::test_name[param]`, from junit's dotted classname."""
    parts = (case.get("classname") or "").split(".")
    name = case.get("name") or ""
    for cut in range(len(parts), 0, -1):  # the longest prefix that is a file: the module
        module = "/".join(parts[:cut]) + ".py"
        if (root / module).is_file():
            return "::".join([module, *parts[cut:], name])
    return "::".join([*parts, name])
