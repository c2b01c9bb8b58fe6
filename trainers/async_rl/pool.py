"""The replicas of an async GRPO run and the Ray they live on: Ray actors hosting vLLM
(`replica.py`), the weight version each holds, their replacement and their reaping; the
configured cluster, or a private local Ray for the job's lifetime."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podium.cluster import PLACE_TIMEOUT_S, placement_shortfall
from podium.errors import PodiumError
from podium.reporting import Reporter
from trainers.async_rl.placement import Placement, ray_options

if TYPE_CHECKING:
    from trainers.weight_sync.replica_calls import ReplicaEndpoint


@contextmanager
def ray_for_job(cpus: int, reporter: Reporter) -> Iterator[Any]:
    """The configured Ray cluster (or the one this process joined), else a private local
    Ray for the job's lifetime: only a Ray this job started is shut down."""
    import logging

    import ray

    from podium.config import get_settings
    from podium.jobs.kinds import TRAIN_STOP_GRACE_S
    from podium.ray_auth import private_ray_auth
    from podium.ray_join import ray_module, sigterm_kept

    # Only a configured cluster is joined (a Ray job, $RAY_ADDRESS, ray_address): the
    # private Ray of another job on this machine would be found by address "auto", and
    # stopping with that job (seen: a second job's replicas died with the first's Ray).
    configured = bool(os.environ.get("RAY_ADDRESS") or get_settings().ray_address)
    with ExitStack() as private:
        if not ray.is_initialized():
            if configured:
                ray_module()
            else:
                # Its own token in a temporary file: Ray would otherwise write
                # ~/.ray/auth_token, and every later `ray start --head` on this machine
                # would require a token (podium.ray_auth).
                private.enter_context(private_ray_auth())
                with sigterm_kept():  # a cancel's SIGTERM stays the job's
                    ray.init(  # "local": a new instance even where another one runs
                        address="local",
                        num_cpus=max(cpus, os.cpu_count() or 1),
                        include_dashboard=False,
                        logging_level=logging.WARNING,
                        # A cancel's SIGTERM reaches the whole process group, this Ray's
                        # GCS too, and Ray ends a process that has lost its GCS after
                        # this many seconds (60 by default): at CI's load the job's
                        # cleanup outlasted that and it never recorded its cancel. The
                        # worker's SIGKILL after the stop grace bounds it instead.
                        _system_config={
                            "gcs_rpc_server_reconnect_timeout_s": int(TRAIN_STOP_GRACE_S) + 60
                        },
                    )
                private.callback(ray.shutdown)  # before the token file goes
                reporter.log("no Ray cluster configured: started a private local Ray")
        yield ray


@dataclass
class Pool:
    """The replicas: Ray actors, the versions they hold, and their replacement."""

    ray: Any
    model: str
    tag: str  # actor names are `<tag>-replica-<i>`: a test may find and kill one
    placement: Placement  # what each replica reserves (a GPU of its own on CUDA)
    # The learner's placement group (placement.reserve_learner): a colocated replica
    # sits in its bundle, on the learner's GPU.
    group: Any = None
    actors: dict[int, Any] = field(default_factory=dict)
    infos: dict[int, dict[str, Any]] = field(default_factory=dict)
    every_info: list[dict[str, Any]] = field(default_factory=list)  # replaced ones too
    held: dict[int, int] = field(default_factory=dict)  # replica -> weight version
    replacing: set[int] = field(default_factory=set)
    restarts: int = 0
    place_timeout_s: float = PLACE_TIMEOUT_S  # a replica not placed by then fails its start
    # The run has ended (failed, or its last step taken): a replica still waiting for
    # a seat stops waiting, so the job ends now rather than after place_timeout_s.
    stopping: threading.Event = field(default_factory=threading.Event)

    def actor_name(self, index: int, generation: int = 0) -> str:
        return f"{self.tag}-replica-{index}" + (f"-r{generation}" if generation else "")

    def start(self, indices: list[int], generation: int = 0) -> list[ReplicaEndpoint]:
        from trainers.async_rl.replica import COLOCATED_GPU_MEMORY, PolicyReplica

        cls = self.ray.remote(max_restarts=0)(PolicyReplica)
        share = self.placement.colocated
        env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("PODIUM_")}}
        actors = {
            i: cls.options(
                name=self.actor_name(i, generation), runtime_env=env, **self.replica_options(i)
            ).remote(self.model, i, True, bool(share), share or COLOCATED_GPU_MEMORY)
            for i in indices
        }
        # Placed first, within a stated time: Ray would queue an actor it cannot place
        # for ever (a replacement after its node died, a GPU the cluster lacks).
        seat = self.placement.replica_seat(indices[0])
        short = placement_shortfall(
            self.ray,
            list(actors.values()),
            {"CPU": seat.num_cpus, "GPU": seat.num_gpus},
            f"replica(s) {indices}",
            self.place_timeout_s,
            self.stopping.is_set,
        )
        if short:
            raise PodiumError(short)
        infos = self.ray.get([a.start.remote() for a in actors.values()])
        for i, info in zip(actors, infos, strict=True):
            self.actors[i], self.infos[i] = actors[i], info
            self.every_info.append(info)
        return [self.ray.get(self.actors[i].get_endpoint.remote()) for i in indices]

    def replica_options(self, index: int) -> dict[str, Any]:
        """Ray options of replica `index` (a replacement sits where the original did)."""
        return ray_options(self.placement.replica_seat(index), self.group)

    def alive(self, index: int) -> bool:
        from ray.exceptions import RayError

        if index in self.replacing:
            return False
        try:
            self.ray.get(self.actors[index].get_endpoint.remote(), timeout=30)
        except RayError:
            return False
        return True

    def stop(self, reporter: Reporter) -> None:
        from trainers.async_rl.replica import reap_servers

        for actor in self.actors.values():
            try:
                self.ray.get(actor.stop.remote(), timeout=30)
            except Exception as exc:  # noqa: BLE001 - dead already; reaped below
                reporter.log(f"replica stop: {type(exc).__name__}")
            self.ray.kill(actor)
        try:
            reap_servers(self.ray, self.every_info, reporter)
        except Exception as exc:  # noqa: BLE001 - the job's own outcome matters more
            reporter.log(f"could not reap the replicas' servers: {type(exc).__name__}: {exc}")
