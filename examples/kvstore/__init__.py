"""kvstore: a replicated, transactional key-value store, the system seedbed tests.

Three (or five) replicas agree on a log with Raft (`raft`), persist it with
checksums and fsync before acknowledging (`storage`), and apply it to a map
of lists with optimistic multi-key transactions (`machine`). The same code
runs as real processes over TCP and real files (`python -m examples.kvstore`)
and, unchanged, inside a seedbed simulation (`scenarios`): it talks only to
asyncio streams, `seedbed.fs`, `time`/`random` and seedbed's hooks.

Modules, in reading order. The store: `frames` (the wire and disk encoding),
`storage`, `raftlog`, `raft`, `machine`, `transport`, `server`, `client`,
`__main__`. Its tests: `cluster` (the replicas in a simulation, watched by
Raft's safety oracles), `workload` (clients and history checks), `scenarios`
(faults and liveness), `bugs` (planted bugs behind off-by-default switches).
"""
