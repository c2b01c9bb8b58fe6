"""Where the learner ranks and the replicas of an async run go, and what each reserves.

    placement = plan_placement(card, "cuda")   # pure: the card's shape and the device kind
    group = reserve_learner(ray, placement)    # the learner's GPUs, held for the job
    cls.options(**ray_options(placement.replicas[i], group))

On CUDA every learner rank and every replica asks Ray for one GPU, so Ray hands each a
GPU of its own (its CUDA_VISIBLE_DEVICES): the learner ranks' GPUs are one placement
group (reserved together, on one node, before any replica starts; rank r in bundle r),
and the replicas take the node GPUs left over. Without this every replica on a node
started vLLM on GPU 0, beside the learner. On CPU each follower rank of a sharded
learner (an actor, rank_workers.py) has a CPU in a bundle of the group, rank r in
bundle r - 1 (rank 0 is the job's process), and each replica one CPU.

`placement: colocated` (one learner rank, one replica) puts both in one bundle of one
GPU: the replica asks for its memory share of it (`vllm_gpu_memory_utilization`), the
learner for the rest, so Ray gives both the same GPU and the learner's pushes go through
vLLM's CUDA IPC engine (trainers/weight_sync/ipc.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

REPLICA_CPUS = 1.0
RANK_CPUS = 1.0  # a follower learner rank on CPU: one core of its node
LEARNER_GROUP_TIMEOUT_S = 120.0
# What a colocated learner leaves free of its share of the GPU: the two processes' CUDA
# contexts and what vLLM allocates outside its budget.
COLOCATED_MARGIN = 0.05


class RunShape(Protocol):
    """What placement reads from a card (GrpoConfig has these)."""

    learner_ranks: int
    replicas: int


def colocated_share(card: RunShape) -> float:
    """The replica's share of the GPU it shares with the learner; 0.0 where the card
    does not colocate them (its `placement`)."""
    if getattr(card, "placement", "separate") != "colocated":
        return 0.0
    return float(getattr(card, "vllm_gpu_memory_utilization", 0.3))


@dataclass(frozen=True)
class Seat:
    """What one actor asks Ray for; `bundle`: its bundle of the learner placement group,
    None for anywhere the cluster has room."""

    role: str  # "learner" or "replica"
    index: int
    num_cpus: float
    num_gpus: float
    bundle: int | None = None


@dataclass(frozen=True)
class Placement:
    device: str  # the device kind the run uses: "cuda" or "cpu"
    learner_bundles: list[dict[str, float]]  # the learner placement group ([]: none)
    learner: list[Seat]
    replicas: list[Seat]
    # The replica's share of the learner's GPU (placement: colocated); 0.0: GPUs apart.
    colocated: float = 0.0

    def replica_seat(self, index: int) -> Seat:
        """Replica `index`'s seat: the planned one (a replacement takes it again), or for
        a replica added while the job runs (`podium jobs scale`) one like theirs."""
        if index < len(self.replicas):
            return self.replicas[index]
        if self.colocated:
            from podium.errors import PodiumError

            raise PodiumError(
                "this run's learner and its one replica share a GPU (placement: "
                "colocated): there is no seat for another replica"
            )
        gpus = 1.0 if self.device == "cuda" else 0.0
        return Seat("replica", index, REPLICA_CPUS, gpus)

    def learner_memory_fraction(self) -> float | None:
        """The share of its GPU the learner may allocate (torch's per-process cap): the
        rest of a GPU it shares with a replica, None where it has the GPU to itself."""
        if not self.colocated:
            return None
        return round(1.0 - self.colocated - COLOCATED_MARGIN, 4)


def plan_placement(card: RunShape, device: str, learner_cpus: float = 0.0) -> Placement:
    """The seats of `card`'s learner ranks and replicas on `device` ("cuda" or "cpu");
    `learner_cpus`: what a learner in an actor of its own takes on CPU (learner_host.py;
    0 for the learner in the job's process)."""
    share = colocated_share(card)
    if share:
        return _colocated(card, device, share, learner_cpus)
    if device == "cuda":
        return Placement(
            device="cuda",
            learner_bundles=[{"GPU": 1.0} for _ in range(card.learner_ranks)],
            learner=[Seat("learner", r, 0.0, 1.0, bundle=r) for r in range(card.learner_ranks)],
            replicas=[Seat("replica", i, REPLICA_CPUS, 1.0) for i in range(card.replicas)],
        )
    # On CPU rank 0 is the job's own process, or an actor taking `learner_cpus`; each
    # follower rank an actor with a CPU of its own bundle.
    return Placement(
        device=device,
        learner_bundles=[{"CPU": RANK_CPUS} for _ in range(1, card.learner_ranks)],
        learner=[Seat("learner", 0, learner_cpus, 0.0)]
        + [Seat("learner", r, RANK_CPUS, 0.0, bundle=r - 1) for r in range(1, card.learner_ranks)],
        replicas=[Seat("replica", i, REPLICA_CPUS, 0.0) for i in range(card.replicas)],
    )


def _colocated(card: RunShape, device: str, share: float, learner_cpus: float) -> Placement:
    """One bundle of one GPU holding the learner and its one replica."""
    from podium.errors import PodiumError

    if device != "cuda":
        raise PodiumError(
            "placement: colocated puts the learner and its replica on one GPU, and this "
            f"run's device is {device} (the Ray cluster, or this host, shows no GPU); run "
            "it where a GPU is, or set --placement separate"
        )
    if card.learner_ranks != 1 or card.replicas != 1:
        raise PodiumError("placement: colocated seats one learner rank and one replica")
    return Placement(
        device="cuda",
        learner_bundles=[{"GPU": 1.0, "CPU": REPLICA_CPUS + learner_cpus}],
        # Ray takes GPU shares in units of 1e-4: the two add up to the whole GPU.
        learner=[Seat("learner", 0, learner_cpus, round(1.0 - share, 4), bundle=0)],
        replicas=[Seat("replica", 0, REPLICA_CPUS, round(share, 4), bundle=0)],
        colocated=share,
    )


def ray_options(seat: Seat, group: Any = None) -> dict[str, Any]:
    """`actor_class.options(...)` for `seat` (`group`: reserve_learner's placement group)."""
    options: dict[str, Any] = {"num_cpus": seat.num_cpus}
    if seat.num_gpus:
        options["num_gpus"] = seat.num_gpus
    if seat.bundle is not None:
        if group is None:
            raise ValueError(f"{seat.role} {seat.index} sits in the learner group: reserve it")
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
            placement_group=group, placement_group_bundle_index=seat.bundle
        )
    return options


def reserve_learner(ray: Any, placement: Placement, name: str = "") -> Any:
    """The learner ranks' placement group, ready (None when there is nothing to reserve),
    on this node when it can be: learner rank 0 runs in this process."""
    if not placement.learner_bundles:
        return None
    from podium.cluster import shortfall_line
    from podium.errors import PodiumError

    group = ray.util.placement_group(
        placement.learner_bundles,
        strategy="STRICT_PACK",
        name=name,
        _soft_target_node_id=ray.get_runtime_context().get_node_id(),
    )
    ready, _ = ray.wait([group.ready()], timeout=LEARNER_GROUP_TIMEOUT_S)
    if not ready:
        ray.util.remove_placement_group(group)
        raise PodiumError(
            shortfall_line(
                "the learner and its replica (one GPU, placement: colocated)"
                if placement.colocated
                else "the learner ranks (one node, --learner-ranks)",
                len(placement.learner_bundles),
                len(placement.learner_bundles),
                placement.learner_bundles[0],
                free=ray.available_resources(),
                total=ray.cluster_resources(),
                timeout_s=LEARNER_GROUP_TIMEOUT_S,
            )
        )
    return group


class LearnerSeat:
    """Holds the GPU of learner rank 0 in the job's process for the job (a Ray actor in
    its bundle) and says which."""

    def where(self) -> dict[str, Any]:
        from podium.cluster import actor_seat

        return actor_seat()


def learner_device(where: dict[str, Any], node_id: str, visible: str | None) -> str:
    """The torch device of the GPU Ray reserved for the learner (LearnerSeat.where), seen
    from the job's process on node `node_id` whose CUDA_VISIBLE_DEVICES is `visible`."""
    from podium.errors import PodiumError

    if where["node_id"] != node_id:
        raise PodiumError(
            f"the learner's GPU was reserved on node {where['node']}, not on the node the "
            "job runs on; run the job on a node with a free GPU for the learner"
        )
    gpu = where["gpus"][0]
    if visible is None:
        return f"cuda:{int(gpu)}"
    shown = [v.strip() for v in visible.split(",") if v.strip()]
    if gpu not in shown:
        raise PodiumError(
            f"the learner's reserved GPU {gpu} is hidden from the job's process "
            f"(CUDA_VISIBLE_DEVICES={visible})"
        )
    return f"cuda:{shown.index(gpu)}"


@dataclass
class LearnerSeats:
    """The learner's reservation while the job runs: the group and its seat holders."""

    group: Any = None
    holders: list[Any] | None = None
    where: list[dict[str, Any]] | None = None

    def release(self, ray: Any) -> None:
        for holder in self.holders or []:
            ray.kill(holder)
        if self.group is not None:
            ray.util.remove_placement_group(self.group)


def hold_learner_seats(ray: Any, placement: Placement, name: str) -> LearnerSeats:
    """Reserve the learner ranks' bundles, and hold rank 0's GPU and learn which it is
    (nothing to hold on CPU); the follower ranks' actors take the other bundles."""
    seats = LearnerSeats(group=reserve_learner(ray, placement, name))
    rank0 = placement.learner[0]
    if seats.group is None or rank0.bundle is None:
        return seats
    holder = ray.remote(LearnerSeat).options(**ray_options(rank0, seats.group)).remote()
    seats.holders = [holder]
    seats.where = [ray.get(holder.where.remote())]
    return seats
