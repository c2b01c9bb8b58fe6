"""Which address other nodes reach this process at: the one place Podium chooses the
addresses it hands out (a weight-transfer rendezvous, a learner group's, a replica's
server) and binds its listeners on.

    routable_address()   # Ray's node IP inside Ray; loopback when all is on this host

Inside Ray (a driver joined to a cluster, or an actor) that is the node's IP as Ray
knows it (`ray start --node-ip-address`), the address every other node already uses
to reach this one. A rendezvous on loopback would be sent to a replica on another node,
which would connect to its own loopback and wait out the time-out. Outside Ray nothing
leaves this host, and loopback keeps the listener off the network.
"""

from __future__ import annotations

import sys

LOOPBACK = "127.0.0.1"


def routable_address() -> str:
    """The address this process advertises and binds its listeners on."""
    ray = sys.modules.get("ray")  # not imported: this process is not in Ray
    if ray is None or not ray.is_initialized():
        return LOOPBACK
    address: str = ray.util.get_node_ip_address()
    return address
