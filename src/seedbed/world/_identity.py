"""Old home of node identity, kept so existing imports keep working.

Node identity moved to `seedbed._identity`, below both `seedbed.net` and
`seedbed.world` (DESIGN.md §1: the world uses the network, never the reverse).
"""

from seedbed._identity import (
    NODE,
    NodeDirectory,
    NodeRef,
    current_node,
    current_ref,
    new_node_context,
)

__all__ = ["NODE", "NodeDirectory", "NodeRef", "current_node", "current_ref", "new_node_context"]
