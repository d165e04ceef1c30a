"""The shell command that reruns a seed, spelled as the user can paste it.

A replay command is only useful if it runs in the shell the sweep was started
from. When seedbed was started through `uv run`, the `seedbed` script is
usually not on that shell's PATH, so the command must say `uv run seedbed`;
when no `seedbed` script of this interpreter is on PATH, `python -m seedbed`
with this interpreter works everywhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from seedbed._core.naming import OFF_FLAGS, RUN_FLAGS


def runner_prefix(environ: dict[str, str] | None = None) -> str:
    """How to start the seedbed command from the user's shell, e.g. 'uv run seedbed'."""
    env = os.environ if environ is None else environ
    if env.get("UV_RUN_RECURSION_DEPTH"):
        return "uv run seedbed"
    found = shutil.which("seedbed")
    if found and Path(found).resolve().parent == Path(sys.executable).resolve().parent:
        return "seedbed"
    if found and _same_interpreter(found):
        return "seedbed"
    python = shutil.which("python")
    if python and Path(python).resolve() == Path(sys.executable).resolve():
        return "python -m seedbed"
    return f"{shlex.quote(sys.executable)} -m seedbed"


def runner_for_pytest(environ: dict[str, str] | None = None) -> str:
    """How to start pytest from the user's shell, e.g. 'uv run pytest'."""
    env = os.environ if environ is None else environ
    return "uv run pytest" if env.get("UV_RUN_RECURSION_DEPTH") else "pytest"


def _same_interpreter(script: str) -> bool:
    """True when the `seedbed` script on PATH runs this interpreter (its #! line)."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace")
    except OSError:
        return False
    if not first.startswith("#!"):
        return False
    interpreter = first[2:].strip().split(" ")[0]
    try:
        return Path(interpreter).resolve() == Path(sys.executable).resolve()
    except OSError:
        return False


_FLAGS = RUN_FLAGS  # every run option with a flag, in the order commands print them


def run_command(prefix: str, target: str, seed: int, options: dict[str, object]) -> str:
    """`<prefix> run TARGET --seed N [flags]`: the options that differ from the defaults."""
    words = [*shlex.split(prefix), "run", target, "--seed", str(seed)]
    for name, flag in _FLAGS.items():
        value = options.get(name)
        if value is True:
            words.append(flag)
        elif value is False:
            words += [OFF_FLAGS[name]] if name in OFF_FLAGS else []
        elif value is not None:
            words += [flag, str(value)]
    return shlex.join(words)


def resume_command(argv: list[str], fallback: list[str]) -> str:
    """The command that continues an interrupted sweep or search: as it was typed
    (`fallback` when unknown), with `--resume` and without `--fresh`, which would
    discard what it kept."""
    args = [arg for arg in argv or fallback if arg != "--fresh"]
    extra = [] if "--resume" in args else ["--resume"]
    return f"{runner_prefix()} {shlex.join([*args, *extra])}"
