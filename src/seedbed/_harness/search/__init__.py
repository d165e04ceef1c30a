"""Coverage-guided search: `seedbed explore` keeps the runs that reached
something new and branches from them.

`_features` reads a run's coverage (the features it reached) from what the
run recorded anyway; `_plan` decides each run (a fresh seed, or a branch or
mutation of a corpus entry) from the explorer's seed and the corpus so far;
`_execute` runs one plan; `_state` folds finished runs into the corpus, the
features seen and the failure buckets; `_store` keeps all of it on disk as
it is found; `_engine` drives batches of plans in this process or on a
worker pool; `_summary` tells what was found.
"""

from seedbed._harness.search._engine import ExploreSpec, explore

__all__ = ["ExploreSpec", "explore"]
