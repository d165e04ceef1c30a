"""Running the `seedbed` command as a subprocess, as a user's shell would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RACE = "examples.race:main"


def environment(**env: str) -> dict[str, str]:
    result = {**os.environ, **env}
    result.pop("SEEDBED_REEXEC", None)
    return result


def seedbed(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "seedbed", *args],
        cwd=cwd, env=environment(**env), capture_output=True, text=True, check=False,
    )  # fmt: skip


def start(*args: str, cwd: Path = REPO) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "seedbed", *args], cwd=cwd, env=environment(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def seed_results(path: Path) -> dict[int, tuple[Any, ...]]:
    """Each seed's result, without what may differ between runs (wall time, output)."""
    keep = ("status", "error_type", "message", "bucket", "location", "replay", "trace_hash",
            "steps", "virtual_time", "result_digest")  # fmt: skip
    found: dict[int, tuple[Any, ...]] = {}
    for record in records(path):
        if record["kind"] == "seed":
            assert record["seed"] not in found, f"seed {record['seed']} ran twice"
            found[record["seed"]] = tuple(record[key] for key in keep)
    return found


def write_program(folder: Path, body: str) -> str:
    """A target file `prog.py:main` in `folder`; `seed` is the run's seed inside `main`."""
    path = folder / "prog.py"
    path.write_text(
        "import asyncio, os, random\n\n"
        "def current_seed():\n"
        "    return asyncio.get_running_loop().run_context().seed\n\n"
        "async def main():\n"
        "    seed = current_seed()\n" + "".join(f"    {line}\n" for line in body.splitlines())
    )
    return f"{path}:main"
