"""The simulated network: named nodes, streams and datagrams on virtual time.

`SimNetwork` serves a seedbed loop's network methods (install it with
`loop.install_network(net)`); `NetworkConfig` is its fault model. See each
private module's docstring for the faults it models.
"""

from seedbed.net._config import NetworkConfig
from seedbed.net._network import SimNetwork

__all__ = ["NetworkConfig", "SimNetwork"]
