"""Which address other nodes reach this process at (the one place Podium chooses the
addresses it hands out, a weight-transfer rendezvous, a learner group's, a replica's
server, and binds its listeners on), and where Ray placed an actor, or why it could not
within a stated time: generation replicas and async RL's learner and replicas alike.

    routable_address()   # Ray's node IP inside Ray; loopback when all is on this host
    actor_seat()         # inside an actor: its node, GPUs and CUDA_VISIBLE_DEVICES
    placement_shortfall(ray, actors, asked, "replica 1")  # '' once placed, else why not
    get_on_node(ray, actor.step.remote(), seat["node_id"])  # ray.get, ended by the node's death

Inside Ray (a driver joined to a cluster, or an actor) that is the node's IP as Ray
knows it (`ray start --node-ip-address`), the address every other node already uses
to reach this one. A rendezvous on loopback would be sent to a replica on another node,
which would connect to its own loopback and wait out the time-out. Outside Ray nothing
leaves this host, and loopback keeps the listener off the network.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

LOOPBACK = "127.0.0.1"


def routable_address() -> str:
    """The address this process advertises and binds its listeners on."""
    ray = sys.modules.get("ray")  # not imported: this process is not in Ray
    if ray is None or not ray.is_initialized():
        return LOOPBACK
    address: str = ray.util.get_node_ip_address()
    return address


# How long an actor may wait for the resources it asked for before its job says so:
# Ray would queue it for ever (a replacement on a cluster whose node died, a GPU asked
# of a cluster that has none).
PLACE_TIMEOUT_S = 300.0
STOPPING_POLL_S = 2.0  # how often a placement wait asks whether its caller gave up


def actor_seat() -> dict[str, Any]:
    """Where this Ray actor runs: its node's address and id, the GPUs Ray gave it and
    the CUDA_VISIBLE_DEVICES it set (None outside Ray, or with no GPU asked)."""
    seat: dict[str, Any] = {
        "node": routable_address(),
        "node_id": None,
        "gpus": [],
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        seat["node_id"] = ray.get_runtime_context().get_node_id()
        seat["gpus"] = [str(g) for g in ray.get_gpu_ids()]
    return seat


def placement_shortfall(
    ray: Any,
    actors: Sequence[Any],
    asked: Mapping[str, float],
    what: str,
    timeout_s: float = PLACE_TIMEOUT_S,
    stopping: Callable[[], bool] | None = None,
) -> str:
    """'' once every one of `actors` is placed (its constructor ran); else, after
    `timeout_s` (or as soon as `stopping()` says the caller gave up: its job ended
    meanwhile), they are all killed and the line says what each asked for and what
    the cluster has. An actor whose constructor failed raises that error here."""
    refs = [actor.__ray_ready__.remote() for actor in actors]
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        step = left if stopping is None else min(left, STOPPING_POLL_S)
        ready, pending = ray.wait(refs, num_returns=len(refs), timeout=max(step, 0.0))
        if not pending or left <= step or (stopping is not None and stopping()):
            break
    ray.get(ready)
    if not pending:
        return ""
    line = shortfall_line(  # what the cluster had while they waited, before they go
        what,
        len(pending),
        len(actors),
        asked,
        free=ray.available_resources(),
        total=ray.cluster_resources(),
        timeout_s=timeout_s,
    )
    for actor in actors:
        ray.kill(actor)
    return line


def shortfall_line(
    what: str,
    unplaced: int,
    count: int,
    asked: Mapping[str, float],
    *,
    free: Mapping[str, float],
    total: Mapping[str, float],
    timeout_s: float,
) -> str:
    """One line: `unplaced` of the `count` actors of `what`, each asking `asked`, not
    placed (or, placed, not started: a worker starting on a busy node) in time."""
    wanted = ", ".join(f"{amount:g} {name}" for name, amount in asked.items() if amount)
    names = [name for name in ("CPU", "GPU", "memory") if name in asked or name in total]
    have = ", ".join(
        f"{name} {_amount(name, free.get(name, 0.0))} free of {_amount(name, total.get(name, 0.0))}"
        for name in names
    )
    return (
        f"{what}: {unplaced} of {count} actor(s) asking for {wanted or 'nothing'} each were "
        f"not placed and started within {timeout_s:g} s; the Ray cluster has {have}. Free "
        "some, add a node with those resources, or ask for less"
    )


def _amount(name: str, value: float) -> str:
    return f"{value / 2**30:.1f} GiB" if name == "memory" else f"{value:g}"


NODE_WATCH_S = 10.0  # how often a call into an actor asks whether the actor's node lives


def get_on_node(ray: Any, ref: Any, node_id: str | None, every_s: float = NODE_WATCH_S) -> Any:
    """`ray.get(ref)` for a call into an actor on node `node_id`, that also ends, with
    Ray's `NodeDiedError`, once the GCS has that node dead. Ray fails such a call when
    the actor's death reaches the caller; a job whose node was killed in CI still ran
    300 s later, and Ray has open reports of calls hung on actors gone. The node's state
    comes from the GCS itself, each `every_s` of waiting."""
    if node_id is None:  # not in Ray (a test's stand-in)
        return ray.get(ref)
    while True:
        ready, _ = ray.wait([ref], timeout=every_s)
        if ready:
            return ray.get(ref)
        if not node_alive(ray, node_id):
            from ray.exceptions import NodeDiedError

            line = f"node {node_id} died while a call into an actor on it waited"
            raise NodeDiedError(line)  # type: ignore[no-untyped-call]


def node_alive(ray: Any, node_id: str) -> bool:
    """Whether the GCS has node `node_id` alive (a node it never had is not)."""
    return any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes())
