"""A card asking for GPU placements (issue 49): `placement: colocated` (the learner and
its one replica on one GPU, pushes through vLLM's CUDA IPC engine) and `learner_ranks > 1`
with `device: cuda` (FSDP2 ranks, each on a GPU of its own). What the card refuses, the
plan (what each process asks Ray for and which GPU share it gets), and what the host
refuses, all without a GPU; Ray's side on fake GPUs is tests/ray/test_gpu_seats.py, the
IPC push itself tests/gpu/test_gpu_colocated_async.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from podium.errors import PodiumError
from trainers.async_rl.host import rank_gpus_problem
from trainers.async_rl.learner_setup import learner_spec, rank_spec, sync_backend
from trainers.async_rl.placement import plan_placement, ray_options
from trainers.async_rl.replica import server_args
from trainers.async_rl.sharded import RankSpec
from trainers.config import GrpoConfig
from trainers.runtime import BaseModelRef
from trainers.weight_sync import ReplicaEndpoint, WeightSyncError
from trainers.weight_sync.ipc import backend_for

COLOCATED = {"placement": "colocated", "weight_sync": "nccl", "device": "cuda"}


def card(**extra: Any) -> GrpoConfig:
    return GrpoConfig.model_validate(
        {"model": "base", "table": {"name": "demo.chat"}, "out": "run-1", "rollout": "async"}
        | extra
    )


def test_a_card_asks_for_colocation_and_is_told_what_cannot_hold() -> None:
    assert card().placement == "separate"
    cfg = card(**COLOCATED, vllm_gpu_memory_utilization=0.3)
    assert cfg.placement == "colocated" and sync_backend(cfg) == "ipc"
    card(**{**COLOCATED, "device": "auto"})  # auto: the host or the cluster decides

    with pytest.raises(ValidationError) as caught:
        card(**COLOCATED, replicas=2, learner_ranks=2)
    message = str(caught.value)
    assert "replicas\n" in message and "exactly one replica; set --replicas 1" in message
    assert "learner_ranks\n" in message and "the learner is one rank" in message
    with pytest.raises(ValidationError, match="device: cpu asks for none"):
        card(**{**COLOCATED, "device": "cpu"})
    with pytest.raises(ValidationError, match="set --weight-sync nccl"):
        card(placement="colocated", device="cuda")  # the default weight_sync, gloo
    with pytest.raises(ValidationError, match="placement only apply to rollout: async"):
        card(rollout="sync", placement="colocated")


def test_learner_ranks_on_cuda_are_a_card_the_host_decides() -> None:
    """The card once refused `learner_ranks > 1` with `device: cuda` outright; now the
    host's GPU count decides (check_async_host)."""
    assert card(learner_ranks=2, device="cuda").learner_ranks == 2
    assert rank_gpus_problem(2, 2, None) is None
    problem = rank_gpus_problem(2, 1, "3")
    assert problem is not None
    assert "learner_ranks 2" in problem and "needs 2 GPUs; this host shows 1" in problem
    assert "CUDA_VISIBLE_DEVICES=3" in problem and "Lower --learner-ranks to 1" in problem


def test_the_colocated_plan_puts_the_learner_and_its_replica_in_one_gpu_bundle() -> None:
    cfg = card(**COLOCATED, vllm_gpu_memory_utilization=0.3)
    placement = plan_placement(cfg, "cuda", learner_cpus=1.0)

    assert placement.learner_bundles == [{"GPU": 1.0, "CPU": 2.0}]
    [learner], [replica] = placement.learner, placement.replicas
    assert (learner.bundle, replica.bundle) == (0, 0)  # one bundle: one node, one GPU
    assert (learner.num_gpus, replica.num_gpus) == (0.7, 0.3)  # the whole GPU, shared
    assert (learner.num_cpus, replica.num_cpus) == (1.0, 1.0)
    assert placement.learner_memory_fraction() == 0.65  # the rest, less a margin
    with pytest.raises(ValueError, match="reserve it"):
        ray_options(replica)  # only inside the learner's group
    with pytest.raises(PodiumError, match="no seat for another replica"):
        placement.replica_seat(1)  # a scale-out
    assert placement.replica_seat(0) == replica  # a replacement sits where it sat
    # A separate plan has no share and no cap.
    separate = plan_placement(card(device="cuda", replicas=2), "cuda")
    assert separate.colocated == 0.0 and separate.learner_memory_fraction() is None


def test_colocation_without_a_gpu_is_refused_naming_the_device() -> None:
    cfg = card(**{**COLOCATED, "device": "auto"})
    with pytest.raises(PodiumError, match="this run's device is cpu"):
        plan_placement(cfg, "cpu", learner_cpus=1.0)


def test_the_actor_learner_of_a_colocated_card_asks_for_ipc_and_its_memory_share(
    tmp_path: Path,
) -> None:
    cfg = card(**COLOCATED, vllm_gpu_memory_utilization=0.4)
    base = BaseModelRef("base", tmp_path)
    spec = learner_spec(cfg, base, 0, tmp_path, plan_placement(cfg, "cuda", 1.0))
    assert spec.sync_backend == "ipc" and spec.gpu_memory_fraction == 0.55
    assert learner_spec(card(), base, 0, tmp_path).gpu_memory_fraction is None
    # The replica takes the card's share of the GPU, with vLLM's IPC engine.
    args = server_args(True, 0.4)
    assert args[args.index("--gpu-memory-utilization") + 1] == "0.4"
    assert args[args.index("--weight-transfer-config") + 1] == '{"backend": "ipc"}'


def test_the_backend_comes_from_transfer_backend_and_the_replicas_report() -> None:
    """gloo and disk never ask the replicas; ipc off a shared GPU is refused by the real
    transfer_backend, naming why (on this CPU the learner shares no GPU)."""
    gone = ReplicaEndpoint(0, "http://127.0.0.1:9/v1")  # nothing listens: never asked
    assert backend_for("gloo", "cpu", [gone]) == "gloo"
    assert backend_for("disk", "cpu", [gone]) == "disk"
    with pytest.raises(WeightSyncError, match="same GPU as every replica"):
        backend_for("ipc", "cpu", [])
    with pytest.raises(WeightSyncError, match="podium_device_uuid failed"):
        backend_for("ipc", "cpu", [gone])  # asked, and unreachable: said so


def test_sharded_ranks_train_on_the_gpus_their_seats_hold(tmp_path: Path) -> None:
    cfg = card(learner_ranks=2, device="cuda")
    spec = rank_spec(cfg, BaseModelRef("base", tmp_path), ["cuda:1", "cuda:0"], 0, tmp_path)
    assert spec.device == "cuda" and spec.gpus == [1, 0]
    assert (spec.gpu(0), spec.gpu(1)) == (1, 0)
    again = RankSpec.from_json(spec.to_json())  # as a follower rank reads it
    assert again.gpus == [1, 0] and again.device == "cuda"
    on_cpu = rank_spec(cfg, BaseModelRef("base", tmp_path), ["cpu"], 0, tmp_path)
    assert on_cpu.device == "cpu" and on_cpu.gpus is None and on_cpu.gpu(1) == 1


def test_a_colocated_run_refuses_a_scale_out_saying_why() -> None:
    """`podium jobs scale` on a colocated run: refused with the reason (there is no seat
    for another replica on the one GPU), not an error inside the job."""
    from types import SimpleNamespace

    from trainers.async_rl.scale import ScaleOut

    placement = plan_placement(card(**COLOCATED), "cuda", 1.0)
    run = SimpleNamespace(pool=SimpleNamespace(placement=placement))
    reason = ScaleOut(run, None)._short_of_seats([1])  # type: ignore[arg-type]
    assert "placement: colocated" in reason and "--placement separate" in reason
