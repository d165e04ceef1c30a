"""Sweeps: many seeds in a pool of worker processes, every result kept on disk.

The pieces, one job each:

- `_record`: one finished seed as the JSON record of the results file.
- `_worker`: the worker process, which runs one seed per request.
- `_pool`: the parent's side: workers, the wall-clock watchdog, crashes.
- `_dask`: the same interface on a Dask cluster (`--scheduler`): the client,
  handing batches of seeds to one long task per worker thread.
- `_dask_feed`: that task, on the Dask worker: each batch through a `_pool`
  of its thread, records streamed back a few at a time.
- `_results`: `DIR/results.jsonl`, appended and flushed per seed; resume.
- `_summary`: totals, failure buckets, fault effectiveness, assertions.
- `_display`: progress on a terminal, status lines elsewhere, the summary.
- `_engine`: a whole sweep: resume, pool, file, display, Ctrl-C and SIGTERM.
- `_determinism`: every seed twice under different hash seeds.
- `_command`: the shell command that reruns a seed, as the user started us.

Nothing here runs inside a simulation: the wall clock read here (seeds per
second, the per-seed watchdog, `wall_time`) is for display and for killing
stuck workers, and never reaches a run.
"""
