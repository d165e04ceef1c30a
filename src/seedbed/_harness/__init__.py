"""The harness (layer 6): running targets by name, and everything built on that.

Below the CLI and the pytest plugin, above `scenario`. One job per module:

- `targets`: resolve a target string; run one seed of any target
  (`run_target`), returning a `SeedOutcome` (`outcome`), the one type every
  command, sweep, shrink and self-check reads a seed's result from.
- `sweeps`: many seeds in worker processes (or on Dask), one JSON line each.
- `shrink`: the smallest run that fails the same way.
- `report`: a sweep's results as one self-contained HTML page.
- `selfcheck`: one seed in several fresh processes, one trace hash.
- `explore`: the loop's exploration options, as run options.

Naming a target (its description and replay command) lives below, in
`seedbed._core.naming`, so layers under this one print replay commands
without importing it. The commands are in `seedbed.cli`; nothing here
imports click but the sweep engine, for its progress lines.
"""
