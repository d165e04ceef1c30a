"""Replaying a choice file, for `seedbed run --choices FILE`.

The file's choices replace the run's fresh draws (leniently: a run that
draws differently falls back to defaults), and the outcome's replay command
names the file, since the seed alone no longer reproduces the run. A file
naming a stream the run never opens, or holding a value whose type its draw
cannot use (a string where a delay is drawn), is refused after the run:
that is damage (or another program's file), and replaying around it would
make a shrunk failure "disappear" as a pass.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from seedbed._core import choices
from seedbed._harness.shrink._file import read_choices
from seedbed._harness.targets import name_replay
from seedbed.errors import UsageError


def replay_choices(run: Any, path: str, target: str, seed: int | None,
                   options: dict[str, Any]) -> Any:  # fmt: skip
    """Run `run(seed, **options)` replaying the choice file at `path`; the
    outcome's replay command names the file."""
    saved = read_choices(path, target)
    the_seed = saved.seed if seed is None else seed
    merged = {**saved.options, **{k: v for k, v in options.items() if v not in (None, False)}}
    with choices.session(saved.choices) as session:
        outcome = run(the_seed, **merged)
    if session.misfits:
        stream, reason, value, wanted = session.misfits[0]
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise UsageError(
            f"choices file {path!r}: stream {stream!r}, draw {reason!r}, holds {shown}, not "
            f"{wanted}: the file is damaged or was edited by hand; write null for the quiet "
            "default, or shrink the failure again"
        )
    unknown = session.unopened()
    if unknown:
        raise UsageError(
            f"choices file {path!r}: the run never draws from stream "
            f"{', '.join(repr(name) for name in unknown[:5])}: the file is damaged or was shrunk "
            "from another version of the program; shrink the failure again"
        )
    command = f"seedbed run {target} --choices {path}"
    if seed is not None and seed != saved.seed:
        command += f" --seed {seed}"
    name_replay(outcome.error, command)
    report = getattr(outcome.error, "report", None)
    if report is not None:
        report.replay = command
    return dataclasses.replace(outcome, replay=command)
