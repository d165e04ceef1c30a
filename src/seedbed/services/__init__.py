"""Stand-in services: real protocols on the simulated network, for unmodified clients.

`seedbed.services.Redis(...)` is a node main that serves Redis (RESP2 and
RESP3) on port 6379 of its node, with its append-only file on the node's
simulated disk. The command model is fakeredis's, an optional dependency
(`pip install 'seedbed[services]'`); importing this package does not need
it, starting the stand-in does.

`seedbed.services.Nats(...)` serves NATS core (subjects, wildcards, queue
groups whose member is a seeded choice, request/reply) on port 4222 to
unmodified `nats-py` clients; it needs only the standard library.
"""

from seedbed.services._nats import Nats, NatsOptions
from seedbed.services._options import Redis, RedisOptions

__all__ = ["Nats", "NatsOptions", "Redis", "RedisOptions"]
