"""N vLLM servers of one model for one job: Ray actors, or servers at given URLs.

    with replicas("base", 2, urls=[], reporter=reporter) as endpoints:
        ...  # endpoints[i].base_url; each actor runs one vLLM server on its node

Each actor takes one CPU (`REPLICA_CPUS`) and `gpus` GPUs, so Ray places replicas where
cores (and GPUs) are free, one node or many, and gives each GPU to one replica (Ray sets
its CUDA_VISIBLE_DEVICES, which vLLM starts on); one that cannot be placed within
`podium.cluster.PLACE_TIMEOUT_S` fails the job with what it asked and what the cluster
has. It starts the server with Podium's own serving code (same command,
environment and warm-up as `podium models serve`) bound to its node's address, and
stops it when the job leaves the `with` (success, failure or cancel: the Ray launcher
gives a stopped job 30 s before SIGKILL for this). The actors fate-share with the job:
if the job's process dies, Ray ends them, and an actor that exits normally stops its
server from an exit handler; an actor killed outright (Ray's out-of-memory killer,
SIGKILL) cannot, so on leaving the `with` the job also reaps each replica's server by
its recorded pid and start time, with a small task pinned to that replica's node. When
the job itself is SIGKILLed nothing of that runs: each server's owner watcher (started
by `launch_server`, watching the actor) stops its whole group within seconds.
"""

from __future__ import annotations

import atexit
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from generators.client import Endpoint
from podium import processes
from podium.cluster import (
    PLACE_TIMEOUT_S,
    actor_seat,
    placement_shortfall,
    routable_address,
)
from podium.errors import PodiumError
from podium.ray_join import ray_module
from podium.reporting import Reporter

REPLICA_CPUS = 1.0
START_TIMEOUT_S = 900.0


class VllmReplica:
    """One vLLM server, owned by a Ray actor (this class is made remote at run time)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.proc: subprocess.Popen[bytes] | None = None
        atexit.register(self.stop)

    def start(self) -> dict[str, Any]:
        from podium.config import reset_settings
        from podium.models import get_model
        from podium.models.serving import launch_server

        reset_settings()  # this worker process may have served another job before
        ray_module()  # joined, so the address is the node's
        host = routable_address()
        self.proc, url, log = launch_server(
            get_model(self.model), START_TIMEOUT_S, Reporter(), host=host
        )
        return {
            "url": url,
            "pid": self.proc.pid,
            "started": processes.started_at(self.proc.pid),
            "log": str(log),
            **actor_seat(),  # node, node_id, gpus, cuda_visible_devices
        }

    def stop(self) -> None:
        if self.proc is not None:
            processes.stop(self.proc, grace_s=10)
            self.proc = None


@contextmanager
def replicas(
    model: str,
    count: int,
    *,
    urls: list[str],
    reporter: Reporter,
    gpus: float | None = None,
    place_timeout_s: float = PLACE_TIMEOUT_S,
) -> Iterator[list[Endpoint]]:
    """Endpoints of `count` replicas of `model` (or of the servers at `urls`), each with
    `gpus` GPUs (None: one where the cluster has GPUs, else none)."""
    if urls:
        yield [Endpoint(base_url=u.rstrip("/"), model=model, checkpoint=model) for u in urls]
        return
    ray = ray_module()
    if gpus is None:
        gpus = 1.0 if ray.cluster_resources().get("GPU", 0.0) > 0 else 0.0
    asked = {"CPU": REPLICA_CPUS, "GPU": gpus}
    actor_cls = ray.remote(max_restarts=0)(VllmReplica)
    env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("PODIUM_")}}
    actors = [
        actor_cls.options(runtime_env=env, num_cpus=REPLICA_CPUS, num_gpus=gpus).remote(model)
        for _ in range(count)
    ]
    started: list[dict[str, Any]] = []
    try:
        reporter.log(f"starting {count} vLLM replicas of {model} as Ray actors ({asked} each)")
        short = placement_shortfall(
            ray, actors, asked, f"{count} generation replica(s)", place_timeout_s
        )
        if short:
            raise PodiumError(short)
        started += ray.get([a.start.remote() for a in actors])
        for i, info in enumerate(started):
            reporter.log(
                f"replica {i}: {info['url']} (pid {info['pid']} on {info['node']}, GPUs "
                f"{info['cuda_visible_devices'] or 'none'}, log {info['log']})"
            )
        yield [Endpoint(base_url=s["url"], model=model, checkpoint=model) for s in started]
    finally:
        for actor in actors:
            try:
                ray.get(actor.stop.remote(), timeout=30)
            except Exception as exc:  # dead already; its server is reaped below
                reporter.log(f"replica stop: {type(exc).__name__}")
            ray.kill(actor)
        _reap_servers(ray, started, reporter)


def _reap_server(pid: int, started: float | None) -> bool:
    """Stop a replica's server by its record, then what its group left: an actor killed
    outright takes the API server (the group's leader) with it, but vLLM's engine core
    and workers live on in the group."""
    from podium.models.server_records import VLLM_MARKER

    reaped = processes.reap(processes.Recorded(pid, started), VLLM_MARKER, grace_s=10)
    return processes.kill_orphaned_group(pid, "vllm") > 0 or reaped


def _reap_servers(ray: Any, started: list[dict[str, Any]], reporter: Reporter) -> None:
    """Stop servers whose actor died without stopping them, each on its own node: from
    this process on its own node, through a Ray task on another. A task needs Ray's GCS,
    which a cancelled job's private Ray (stopped by the same SIGTERM) no longer has:
    exporting one waited out Ray's 60 s reconnect, then Ray ended the job's process
    before the job could record its cancel."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    task = ray.remote(num_cpus=0)(_reap_server)
    outcomes = [
        _reap_server(info["pid"], info["started"])
        if info["node_id"] == here
        else task.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(info["node_id"], soft=False)
        ).remote(info["pid"], info["started"])
        for info in started
    ]
    refs = [o for o in outcomes if not isinstance(o, bool)]
    remote = iter(ray.get(refs, timeout=60) if refs else [])
    for info, outcome in zip(started, outcomes, strict=True):
        if outcome if isinstance(outcome, bool) else next(remote):
            reporter.log(f"stopped the server of a dead replica: pid {info['pid']}")
