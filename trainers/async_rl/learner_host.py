"""The learner as a Ray actor, placed where the card's GPUs are, and the two seams the
run drives it through (`RemoteLearner`, `RemoteSync`).

    host = start_learner_host(ray, placement, group, spec)  # placed within a stated time
    learner, sync = RemoteLearner(ray, host), RemoteSync(ray, host)

The actor (`LearnerHost`) builds the same `Learner` the one-machine path builds in the
job's process (`build_learner`) and the learner-side weight transfer, so the step and the
pushes run on the learner's node, with the CUDA_VISIBLE_DEVICES Ray gave it, and every
rendezvous it hosts is on that node's address. The job's process (on a head with no CPUs
or GPUs, the normal case on a cluster) only hands it samples and asks for pushes.

A snapshot stays in the actor: the run holds a `Snapshot` with the plan and no tensors,
and the actor's copy goes when the run lets go of it (every push that sends it is done).

A learner lost with its node (or killed) fails the job with a line naming it, its node
and devices (`LearnerLost`); the job keeps the checkpoints saved so far.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podium.errors import PodiumError
from trainers.async_rl.protocols import LearnerLost

if TYPE_CHECKING:
    import torch

    from trainers.async_rl.learner import Learner, LearnerSettings, Sample, StepStats
    from trainers.async_rl.placement import LearnerSeats, Placement
    from trainers.weight_sync.base import Snapshot, SyncRecord
    from trainers.weight_sync.replica_calls import ReplicaEndpoint


@dataclass(frozen=True)
class LearnerSpec:
    """What the learner needs to build itself, wherever it runs."""

    checkpoint: str
    device: str  # the card's: "auto", "cpu" or "cuda", resolved where the learner runs
    settings: LearnerSettings
    pad_token_id: int
    sync_backend: str  # "ipc" (placement: colocated): checked against the replicas' GPU
    work_dir: str
    # The share of its GPU the learner may allocate (placement: colocated, the replica
    # has the rest); None: the whole GPU.
    gpu_memory_fraction: float | None = None


def build_learner(spec: LearnerSpec, device: str) -> Learner:
    """The one-process learner on `device` (and its reference copy when beta > 0): the
    same for the job's process and the actor."""
    from trainers.async_rl.learner import Learner
    from trainers.runtime import load_model

    model = load_model(Path(spec.checkpoint), device).to(device)
    reference = None
    if spec.settings.beta > 0:
        reference = load_model(Path(spec.checkpoint), device).to(device)
    return Learner(model, spec.settings, pad_token_id=spec.pad_token_id, reference=reference)


class LearnerHost:
    """The learner and its side of the weight transfer, in one Ray actor."""

    def __init__(self, spec: LearnerSpec) -> None:
        from trainers.runtime import prepare_env, resolve_device
        from trainers.weight_sync import make_weight_sync

        prepare_env()
        self.spec = spec
        self.device = resolve_device(spec.device)  # CUDA_VISIBLE_DEVICES: Ray's choice
        if spec.gpu_memory_fraction and self.device.startswith("cuda"):
            import torch

            torch.cuda.set_per_process_memory_fraction(spec.gpu_memory_fraction, self.device)
        self.learner = build_learner(spec, self.device)
        self.sync = make_weight_sync(spec.sync_backend, work_dir=Path(spec.work_dir))
        self.snapshots: dict[int, Snapshot] = {}
        self._ids = itertools.count(1)

    def where(self) -> dict[str, Any]:
        import ray

        from podium.cluster import actor_seat

        actor = ray.get_runtime_context().get_actor_id()
        return {**actor_seat(), "device": self.device, "actor": actor}

    def step(self, samples: Sequence[Sample]) -> StepStats:
        return self.learner.step(samples)

    def connect(self, endpoints: Sequence[ReplicaEndpoint]) -> str:
        """Connect to the replicas over the backend the card's asks for where they are
        (CUDA IPC for a replica on the learner's own GPU: ipc.backend_for); its name."""
        from trainers.weight_sync import make_weight_sync
        from trainers.weight_sync.ipc import backend_for

        backend = backend_for(self.spec.sync_backend, self.device, endpoints)
        if backend != self.sync.backend:
            self.sync.close()
            self.sync = make_weight_sync(backend, work_dir=Path(self.spec.work_dir))
        self.sync.connect(endpoints)
        return backend

    def snapshot(self) -> tuple[int, Any]:
        """Copy the weights for a push: its id here, and the plan."""
        snap = self.sync.snapshot(self.learner.named_tensors())
        key = next(self._ids)
        self.snapshots[key] = snap
        return key, snap.plan

    def drop_snapshot(self, key: int) -> None:
        self.snapshots.pop(key, None)

    def push_snapshot(self, key: int, version: int, only: list[int] | None) -> SyncRecord:
        return self.sync.push_snapshot(self.snapshots[key], version, only)

    def add_replica(self, endpoint: ReplicaEndpoint, version: int) -> SyncRecord:
        return self.sync.add_replica(endpoint, self.learner.named_tensors(), version)

    def drop_replica(self, index: int) -> None:
        self.sync.drop_replica(index)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu() for k, v in self.learner.model.state_dict().items()}

    def close(self) -> None:
        self.sync.close()


def start_learner_host(
    ray: Any, placement: Placement, group: Any, spec: LearnerSpec, *, name: str, timeout_s: float
) -> Any:
    """The learner's actor, placed (in the learner's placement group on GPUs) and built
    within `timeout_s`, else a PodiumError saying what it asked and what the cluster has."""
    import os

    from podium.cluster import placement_shortfall
    from trainers.async_rl.placement import ray_options

    seat = placement.learner[0]
    env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("PODIUM_")}}
    cls = ray.remote(max_restarts=0)(LearnerHost)
    # Threaded, as the learner in the job's process is: a push lands while it trains.
    options = {"name": name, "runtime_env": env, "max_concurrency": 4}
    host = cls.options(**options, **ray_options(seat, group)).remote(spec)
    asked = {"CPU": seat.num_cpus, "GPU": seat.num_gpus}
    short = placement_shortfall(ray, [host], asked, "the learner", timeout_s)
    if short:
        raise PodiumError(short)
    return host


LEARNER_CPUS = 1.0  # a CPU learner in its own actor: one core of its node


def start_remote_learner(
    ray: Any, placement: Placement, spec: LearnerSpec, *, name: str, timeout_s: float
) -> tuple[RemoteLearner, RemoteSync, LearnerSeats]:
    """Reserve the learner's seat, start its actor there, and the run's seams to it;
    the seats hold the actor and its group for the job (`LearnerSeats.release`)."""
    from trainers.async_rl.placement import LearnerSeats, reserve_learner

    seats = LearnerSeats(group=reserve_learner(ray, placement, name))
    try:
        host = start_learner_host(ray, placement, seats.group, spec, name=name, timeout_s=timeout_s)
        seats.holders = [host]
        where = ray.get(host.where.remote())
    except BaseException:
        seats.release(ray)
        raise
    seats.where = [where]
    return RemoteLearner(ray, host, where, spec.checkpoint), RemoteSync(ray, host, where), seats


class _Calls:
    """Calls into the learner's actor; its loss is the job's failure, said in one line."""

    def __init__(self, ray: Any, host: Any, where: dict[str, Any]) -> None:
        self.ray, self.host, self.where = ray, host, where

    def call(self, method: str, *args: Any) -> Any:
        from ray.exceptions import NodeDiedError, RayActorError, RayTaskError

        from podium.cluster import get_on_node

        try:
            ref = getattr(self.host, method).remote(*args)
            return get_on_node(self.ray, ref, self.where.get("node_id"))
        except RayTaskError as exc:  # the learner's own error: raised as itself
            cause = exc.cause if isinstance(getattr(exc, "cause", None), Exception) else None
            raise (cause or exc) from None
        except (RayActorError, NodeDiedError) as exc:
            raise LearnerLost(learner_lost_line(self.where, exc)) from None


def learner_lost_line(where: dict[str, Any], exc: BaseException) -> str:
    return (
        f"the learner was lost with its actor on node {where.get('node')} "
        f"(CUDA_VISIBLE_DEVICES={where.get('cuda_visible_devices')}): "
        f"{type(exc).__name__}; the run cannot go on without its weights"
    )


class RemoteLearner(_Calls):
    """`PolicyLearner` over the actor: the step runs there, the weights stay there."""

    def __init__(self, ray: Any, host: Any, where: dict[str, Any], checkpoint: str) -> None:
        super().__init__(ray, host, where)
        self.checkpoint = checkpoint
        self._template: Any = None

    def step(self, samples: Sequence[Sample]) -> StepStats:
        stats: StepStats = self.call("step", list(samples))
        return stats

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """Nothing crosses: RemoteSync snapshots and pushes inside the actor."""
        return iter(())

    def connect(self, endpoints: Sequence[tuple[int, str]]) -> None:
        """One rank: the actor's sync connects (RemoteSync.connect)."""

    def announce_push(self, version: int) -> None:
        """One rank: no other rank to tell."""

    def announce_replica(self, index: int, base_url: str, version: int) -> None:
        """One rank: no other rank to tell."""

    def check(self) -> None:
        """Lost with its node or its actor: LearnerLost now (`call`), not at the next step."""
        self.call("where")

    def full_model(self) -> Any:
        """The model with the actor's weights, to save here (the registry's disk)."""
        from trainers.runtime import load_model

        if self._template is None:
            self._template = load_model(Path(self.checkpoint), "cpu")
        self._template.load_state_dict(self.call("state_dict"))
        return self._template

    def close(self) -> None:
        from ray.exceptions import RayError

        try:
            self.ray.get(self.host.close.remote(), timeout=60)
        except RayError:
            pass  # lost already: the job says so
        self.ray.kill(self.host)


class RemoteSync(_Calls):
    """`WeightPusher` over the actor's side of the transfer."""

    def __init__(self, ray: Any, host: Any, where: dict[str, Any]) -> None:
        super().__init__(ray, host, where)
        self.replicas: dict[int, ReplicaEndpoint] = {}

    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        self.backend: str = self.call("connect", list(replicas))
        self.replicas.update({r.index: r for r in replicas})

    def snapshot(self, named_tensors: Any, *, copy: bool = True) -> Snapshot:
        from trainers.weight_sync.base import Snapshot

        key, plan = self.call("snapshot")
        snap = Snapshot(plan, [], memo={"learner_snapshot": key})
        # The actor's copy goes once no push holds this one any more (not at exit: Ray
        # and the actor are gone by then).
        weakref.finalize(snap, self.host.drop_snapshot.remote, key).atexit = False
        return snap

    def push_snapshot(
        self, snap: Snapshot, version: int, only: Sequence[int] | None = None
    ) -> SyncRecord:
        record: SyncRecord = self.call(
            "push_snapshot",
            snap.memo["learner_snapshot"],
            version,
            None if only is None else list(only),
        )
        return record

    def add_replica(self, replica: ReplicaEndpoint, named_tensors: Any, version: int) -> SyncRecord:
        record: SyncRecord = self.call("add_replica", replica, version)
        self.replicas[replica.index] = replica
        return record

    def drop_replica(self, index: int) -> None:
        self.call("drop_replica", index)
        self.replicas.pop(index, None)

    def close(self) -> None:
        """The actor closes its side (RemoteLearner.close)."""


def learner_on_a_node_of_its_own(ray: Any) -> bool:
    """Whether the learner goes into an actor: where the cluster has GPUs (the learner
    goes where they are), or where the job's node offers Ray no CPU (a head kept for
    the drivers). Otherwise, one machine or a head with room, it runs in the job's
    process as without Ray."""
    if ray.cluster_resources().get("GPU", 0.0) > 0:
        return True
    here = ray.get_runtime_context().get_node_id()
    for node in ray.nodes():
        if node.get("NodeID") == here:
            return float(node.get("Resources", {}).get("CPU", 0.0)) <= 0
    return False
