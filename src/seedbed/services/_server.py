"""The Redis stand-in's node main: load the file, listen, serve until the node dies.

Each start of the node is a fresh Redis process: a new fakeredis server,
filled from the append-only file on the node's disk, listening on the
simulated network with plain `asyncio.start_server`. Nothing survives a
crash but the disk. If the file cannot be written (`AofFailure`) the
stand-in closes its port and every connection and its main returns, as
Redis exits: the node stays down until the world restarts it.
"""

from __future__ import annotations

import asyncio
import functools
import logging

from seedbed._core.identity import current_node
from seedbed.aio.loop import SeedbedLoop
from seedbed.errors import UsageError
from seedbed.services import _aof
from seedbed.services._connection import Service, handle
from seedbed.services._journal import Journal
from seedbed.services._keyspace import SimServer
from seedbed.services._options import RedisOptions
from seedbed.services._persist import AofFailure, AppendOnlyFile
from seedbed.services._replication import Replication
from seedbed.services._session import Session

log = logging.getLogger("seedbed.services")


async def serve(options: RedisOptions) -> None:
    """Serve Redis on `options.port` of this node until the node crashes."""
    node = current_node()
    loop = asyncio.get_running_loop()
    if node is None or type(loop) is not SeedbedLoop:
        raise UsageError(
            "seedbed.services.Redis(...) is a node main: give it to a Simulation, "
            'sim.host("redis", Redis()), rather than running it outside a simulated node'
        )
    label = f"redis {node}"
    durable = options.appendonly and options.appendfsync == "always"
    journal = Journal(wait_for_sync=durable)
    server = SimServer(journal, options.version_tuple)
    reader = _aof.Reader(Session(server, journal, persisted=options.appendonly, link=True))
    journal.encode = functools.partial(_aof.record, server, reader)
    aof = AppendOnlyFile(options, journal) if options.appendonly else None
    try:
        if aof is not None:
            aof.load(server)
    except AofFailure as exc:
        log.error("%s: %s; exiting, as Redis does", label, exc)
        return
    replication = Replication(server, journal, persisted=options.appendonly, label=label)
    stream = loop.entropy.stream(f"services {label}")
    service = Service(options, server, journal, replication, stream, label)
    if options.replicaof is not None:
        replication.follow(*options.primary)
    listener = await asyncio.start_server(functools.partial(handle, service), port=options.port)
    try:
        if aof is None:
            await listener.serve_forever()
        else:
            await aof.run()
    except* AofFailure as group:
        log.error("%s: %s; exiting, as Redis does", label, group.exceptions[0])
    finally:
        replication.stop_following()
        listener.close()
        for writer in list(service.writers):
            writer.close()
