"""How an async job sets up its learner from the card: where it runs (an actor, or the
job's process and its follower ranks), on which devices, with which side of the weight
transfer. job.py calls these; the placement tests call the same ones.

    remote = learner_in_an_actor(ray, cfg)
    placement = plan_placement(cfg, seat_kind(ray, cfg, device, remote), ...)
    spec = learner_spec(cfg, base, pad_token_id, work_dir, placement)   # an actor's
    seats = hold_learner_seats(ray, placement, name)
    learner, sync = learner_and_sync(cfg, base, devices, pad_token_id, work_dir, log,
                                     ranks=RankSeats(ray, placement, seats, name, timeout_s))
    ranks_at = learner_nodes(seats, devices, learner)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podium.cluster import actor_seat
from trainers.async_rl.learner_host import (
    LearnerSpec,
    build_learner,
    learner_on_a_node_of_its_own,
)
from trainers.async_rl.placement import LearnerSeats, Placement, learner_device
from trainers.config import GrpoConfig
from trainers.runtime import BaseModelRef

if TYPE_CHECKING:
    from trainers.async_rl.learner import LearnerSettings
    from trainers.async_rl.protocols import Followers, PolicyLearner
    from trainers.async_rl.sharded import RankSpec
    from trainers.weight_sync import WeightSync


def learner_in_an_actor(ray: Any, cfg: GrpoConfig) -> bool:
    """One learner rank on a cluster whose GPUs, or CPUs, are on other nodes than the
    job's (learner_host.py), and always a learner colocated with its replica (both sit
    in one bundle of the learner's placement group); of several ranks rank 0 runs in
    the job's process and the others are actors (rank_workers.py)."""
    if cfg.placement == "colocated":
        return True
    return cfg.learner_ranks == 1 and learner_on_a_node_of_its_own(ray)


def seat_kind(ray: Any, cfg: GrpoConfig, device: str, remote: bool) -> str:
    """What the seats reserve: GPUs where the learner goes to a cluster that has them
    (its actor then trains on the GPU Ray gave it), else the job's own device."""
    if remote and cfg.device != "cpu":
        has_gpus = ray.cluster_resources().get("GPU", 0.0) > 0
        return "cuda" if has_gpus or cfg.device == "cuda" else "cpu"
    return device


def sync_backend(cfg: GrpoConfig) -> str:
    """The backend the learner asks for: vLLM's CUDA IPC engine for a learner colocated
    with its replica (ipc.transfer_backend refuses it, naming why, where they do not
    share a GPU), else the card's."""
    return "ipc" if cfg.placement == "colocated" else cfg.weight_sync


def learner_spec(
    cfg: GrpoConfig,
    base: BaseModelRef,
    pad_token_id: int,
    work_dir: Path,
    placement: Placement | None = None,
) -> LearnerSpec:
    return LearnerSpec(
        checkpoint=str(base.path),
        device=cfg.device,
        settings=learner_settings(cfg),
        pad_token_id=pad_token_id,
        sync_backend=sync_backend(cfg),
        work_dir=str(work_dir),
        gpu_memory_fraction=placement.learner_memory_fraction() if placement else None,
    )


def rank_devices(seats: LearnerSeats, node_id: str, visible: str | None, device: str) -> list[str]:
    """Each learner rank's torch device as the job's process sees it: the GPU Ray
    reserved for it (its seat), else `device` for every rank."""
    if not seats.where:
        return [device]
    return [learner_device(where, node_id, visible) for where in seats.where]


def rank_spec(
    cfg: GrpoConfig, base: BaseModelRef, devices: list[str], pad_token_id: int, work_dir: Path
) -> RankSpec:
    """The spec of `cfg.learner_ranks` sharded ranks: on GPUs (`devices` "cuda:N", one a
    rank) FSDP2 over NCCL, rank r on the GPU its seat holds; else gloo on CPU."""
    from podium.cluster import routable_address
    from podium.models.vllm_launch import free_port
    from trainers.async_rl.sharded import RankSpec

    cuda = devices[0].startswith("cuda")
    return RankSpec(
        checkpoint=str(base.path),
        ranks=cfg.learner_ranks,
        host=routable_address(),  # inside Ray: the node's IP, which replicas reach
        group_port=free_port(),
        sync_backend=cfg.weight_sync,
        sync_port=free_port(),
        work_dir=str(work_dir),
        settings=learner_settings(cfg),
        pad_token_id=pad_token_id,
        seed=cfg.seed,
        device="cuda" if cuda else "cpu",
        gpus=[int(d.partition(":")[2] or 0) for d in devices] if cuda else None,
        rank_timeout_s=cfg.learner_rank_timeout_s,
    )


@dataclass(frozen=True)
class RankSeats:
    """Where a sharded learner's follower ranks go: their seats of `placement` in the
    group `seats` reserved, each an actor placed within `timeout_s`."""

    ray: Any
    placement: Placement
    seats: LearnerSeats
    name: str
    timeout_s: float

    def starter(self) -> Callable[[RankSpec], Followers]:
        from trainers.async_rl.rank_workers import start_rank_actors

        return start_rank_actors(
            self.ray,
            self.placement.learner[1:],
            self.seats.group,
            name=self.name,
            timeout_s=self.timeout_s,
        )


def learner_and_sync(
    cfg: GrpoConfig,
    base: BaseModelRef,
    devices: list[str],
    pad_token_id: int,
    work_dir: Path,
    log: Callable[[str], object],
    ranks: RankSeats | None = None,
) -> tuple[PolicyLearner, WeightSync]:
    """One learner process on devices[0], or rank 0 of `learner_ranks` (sharded.py) with
    its followers in the seats `ranks`, and its sync."""
    from trainers.weight_sync import make_weight_sync

    if cfg.learner_ranks == 1:
        learner = build_learner(learner_spec(cfg, base, pad_token_id, work_dir), devices[0])
        return learner, make_weight_sync(cfg.weight_sync, work_dir=work_dir)
    from trainers.async_rl.sharded import ShardedLearner

    if ranks is None:
        raise ValueError("learner_ranks > 1: the follower ranks need their seats (RankSeats)")

    spec = rank_spec(cfg, base, devices, pad_token_id, work_dir)
    sync = make_weight_sync(
        cfg.weight_sync,
        learner_ranks=cfg.learner_ranks,
        rank=0,
        work_dir=work_dir,
        address=(spec.host, spec.sync_port),
    )
    from trainers.async_rl.rank_workers import watch_followers

    try:
        sharded = ShardedLearner(spec, log, ranks.starter())
    except BaseException:
        sync.close()
        raise
    watch_followers(sync, sharded.followers, spec.rank_timeout_s)
    return sharded, sync


RECORDED = ("rank", "node", "device", "cuda_visible_devices", "actor")


def learner_nodes(
    seats: LearnerSeats, devices: list[str], learner: object = None
) -> list[dict[str, Any]]:
    """Each learner rank's node and devices, for the job's record: rank 0 in its actor
    (learner_host.py) or the job's process (on the GPU its seat holds, else this node),
    and a sharded learner's followers where their actors ran (`actor`: the Ray actor's
    id; None for the job's process)."""
    here = seats.where[0] if seats.where else actor_seat()
    rank0 = {
        "rank": 0,
        "node": here["node"],
        "device": devices[0],
        "cuda_visible_devices": here["cuda_visible_devices"],
        "actor": here.get("actor"),  # a seat holder's where has none: the job trains
    }
    followers = getattr(getattr(learner, "followers", None), "where", [])
    return [rank0] + [{key: where.get(key) for key in RECORDED} for where in followers]


def learner_settings(cfg: GrpoConfig) -> LearnerSettings:
    """The card's learner fields: `batch_size` samples a forward pass, `batch_size x
    grad_accum` a batch, cut into `ppo_minibatches` optimizer steps for `ppo_epochs`
    passes, on the card's LR schedule over the whole run."""
    from trainers.async_rl.learner import LearnerSettings

    return LearnerSettings(
        learning_rate=cfg.learning_rate,
        temperature=cfg.temperature,
        minibatches=cfg.ppo_minibatches,
        epochs=cfg.ppo_epochs,
        micro_batch=cfg.batch_size,
        beta=cfg.beta,
        lr_scheduler=cfg.lr_scheduler,
        warmup_steps=cfg.warmup_steps,
        total_steps=cfg.max_steps,
    )
