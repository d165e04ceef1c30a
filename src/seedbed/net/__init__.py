"""The simulated network: named nodes, streams and datagrams on virtual time.

`SimNetwork` serves a seedbed loop's network methods (install it with
`loop.install_network(net)`); `NetworkConfig` is its fault model. A loop
with no world gets a one-node loopback network (`_loopback`). See each
private module's docstring for the faults it models.
"""

from seedbed.net import _loopback  # noqa: F401 (registers the plain loop's loopback network)
from seedbed.net._config import NetworkConfig
from seedbed.net._network import SimNetwork

__all__ = ["NetworkConfig", "SimNetwork"]
