"""The failure database: failures a sweep, an explore or the pytest plugin
found, kept in `.seedbed/failures/` and replayed first until they pass.

- `_db`: the folder of one target, its entries read (each checked), written
  (a temporary file renamed into place) and dropped.
- `_run`: running one entry, in a sweep worker, as its replay command does.
- `_replay`: replaying a target's entries first in a worker pool, and the
  lines that report them apart from fresh seeds.

Nothing here runs inside a simulation.
"""
