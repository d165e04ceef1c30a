"""A library built for one node per process: its leader is a class attribute and
its peers a module global (the isolation tests run two nodes of it in one process)."""

from leaderlib.state import State, peers, serve

__all__ = ["State", "peers", "serve"]
