"""`Redis(...)`: the stand-in's settings, checked when written, and the node main they make."""

from __future__ import annotations

import functools
import math
import posixpath
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from seedbed.errors import UsageError

APPENDFSYNC = ("always", "everysec", "no")
NodeMain = Callable[[], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class RedisOptions:
    """What `Redis(...)` was given (see `Redis` for each field)."""

    port: int = 6379
    appendonly: bool = True
    appendfsync: str = "everysec"
    dir: str = "/data"
    appendfilename: str = "appendonly.aof"
    latency_min: float = 0.0
    latency_max: float = 0.001
    version: str = "7.4"
    replicaof: str | None = None

    def __post_init__(self) -> None:
        if (
            not isinstance(self.port, int)
            or isinstance(self.port, bool)
            or not 0 < self.port < 65536
        ):
            raise UsageError(f"Redis(port=...) takes a port number 1-65535, got {self.port!r}")
        if not isinstance(self.appendonly, bool):
            raise UsageError(f"Redis(appendonly=...) takes True or False, got {self.appendonly!r}")
        if self.appendfsync not in APPENDFSYNC:
            raise UsageError(
                f"Redis(appendfsync=...) takes one of 'always', 'everysec', 'no', "
                f"got {self.appendfsync!r}"
            )
        self._check_paths()
        self._check_latency()
        self._check_replicaof()
        if not isinstance(self.version, str) or not _is_version(self.version):
            raise UsageError(f"Redis(version=...) takes a version like '7.4', got {self.version!r}")

    def _check_paths(self) -> None:
        if not isinstance(self.dir, str) or not self.dir.startswith("/"):
            raise UsageError(f"Redis(dir=...) takes an absolute path, got {self.dir!r}")
        name = self.appendfilename
        if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
            raise UsageError(f"Redis(appendfilename=...) takes a file name, got {name!r}")

    def _check_latency(self) -> None:
        for field in ("latency_min", "latency_max"):
            value = getattr(self, field)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0:
                raise UsageError(f"Redis({field}=...) takes seconds >= 0, got {value!r}")
        if self.latency_min > self.latency_max:
            raise UsageError(
                f"Redis(latency_min={self.latency_min!r}) is above latency_max={self.latency_max!r}"
            )

    def _check_replicaof(self) -> None:
        if self.replicaof is None:
            return
        host, _, port = (
            self.replicaof.partition(":") if isinstance(self.replicaof, str) else ("", "", "")
        )
        if not host or (port and not (port.isdigit() and 0 < int(port) < 65536)):
            raise UsageError(
                f"Redis(replicaof=...) takes a primary's 'host' or 'host:port', "
                f"got {self.replicaof!r}"
            )

    @property
    def primary(self) -> tuple[str, int]:
        """The primary this node replicates (`replicaof`), with the default port."""
        assert self.replicaof is not None, "only a replica has a primary"
        host, _, port = self.replicaof.partition(":")
        return host, int(port) if port else 6379

    @property
    def path(self) -> str:
        """The append-only file on the node's disk."""
        return posixpath.join(self.dir, self.appendfilename)

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.version.split("."))


def _is_version(text: str) -> bool:
    parts = text.split(".")
    return 1 <= len(parts) <= 3 and all(part.isdigit() for part in parts)


def Redis(  # named as the service it stands in for, like a class
    *,
    port: int = 6379,
    appendonly: bool = True,
    appendfsync: str = "everysec",
    dir: str = "/data",  # Redis's own name for it
    appendfilename: str = "appendonly.aof",
    latency_min: float = 0.0,
    latency_max: float = 0.001,
    version: str = "7.4",
    replicaof: str | None = None,
) -> NodeMain:
    """A node main that serves Redis on `port` of the simulated network.

    `sim.host("redis", Redis(appendfsync="always"))`: clients on other nodes
    connect to `redis:6379` with an unmodified `redis.asyncio` client. Each
    call of the main (the node's start, every restart) builds a fresh server
    from the append-only file on the node's disk, as a restarted Redis
    process does.

    - `appendonly`: keep an append-only file at `dir/appendfilename` (on by
      default); off, a restart starts empty (a cache).
    - `appendfsync`: when the file is fsynced, as in Redis. "always": before
      each reply, so an acknowledged write survives any crash; "everysec":
      once a second, so a crash can take back about the last second of
      acknowledged writes; "no": never by Redis, the operating system writes
      dirty pages back within about 30 seconds, so a crash can take back
      that much.
    - `latency_min`/`latency_max`: what a read from a connection (one
      command, or a pipeline's batch) waits before it runs, drawn between
      them from the node's "services redis NODE" stream (a busy server), so
      commands of different clients interleave as the seed says.
    - `version`: the Redis version reported and whose commands are served.
    - `replicaof`: make this node a replica of the primary at "host" or
      "host:port": it follows the primary's writes asynchronously (a write
      is acknowledged before a replica has it), serves reads (stale, while
      the link is down) and refuses writes (`READONLY`).
      `REPLICAOF NO ONE` sent to it promotes it (a failover, losing what
      the primary acknowledged but had not streamed); `REPLICAOF host port`
      makes any node follow another.

    Faults: the world's crash, pause, partition and latency reach it as any
    node; a crash keeps what `appendfsync` fsynced, and the disk's faults
    apply to the file. An error writing or fsyncing the file stops the
    stand-in (it closes its port, as Redis exits). With buggify on, a
    subscriber may be disconnected instead of getting a message (Redis's
    output-buffer limit), a command may stall 100 ms, and a replica may fall
    half a second behind.

    Needs fakeredis (`pip install 'seedbed[services]'`); runs only inside a
    simulated node. The synchronous `redis` client is refused there with
    `SimulationEscape` (it resolves and connects with real sockets): use
    `redis.asyncio`.
    """
    options = RedisOptions(
        port=port, appendonly=appendonly, appendfsync=appendfsync, dir=dir,
        appendfilename=appendfilename, latency_min=latency_min, latency_max=latency_max,
        version=version, replicaof=replicaof,
    )  # fmt: skip
    try:  # fakeredis is imported only when the stand-in is used
        from seedbed.services._server import serve
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in ("fakeredis", "redis", "sortedcontainers"):
            raise
        raise UsageError(
            f"seedbed.services.Redis needs fakeredis ({missing} is not installed): "
            "pip install 'seedbed[services]'"
        ) from exc

    main: NodeMain = functools.partial(serve, options)
    return main
