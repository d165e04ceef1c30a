"""Shrinking a failing run, and choice files that replay it leniently.

`_file` reads and writes choice files (JSON, versioned, checked line by
line of meaning); `_trial` runs a target once under a list of choices;
`_search` minimizes the list while the same failure still happens; `_story`
tells what the shrunk run did; `_replay` replays a choice file. `seedbed
shrink` and `seedbed run --choices` (in `seedbed.cli`) are the commands
over them.
"""

from seedbed._harness.shrink._replay import replay_choices

__all__ = ["replay_choices"]
