"""The GPU seats of issue 49's card placements on a real Ray head declaring two fake GPUs
(`ray start --num-gpus=2` on a CPU host): a colocated learner and its replica get the
same GPU (one bundle, their shares adding to it), a colocation Ray cannot seat fails
within its stated time saying what it asked, and two learner ranks on `device: cuda`
train on the GPUs their seats hold (the spec their FSDP2 ranks are started with)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import running_cluster

from trainers.config import GrpoConfig
from trainers.runtime import BaseModelRef

pytestmark = pytest.mark.ray


class GpuProbe:
    """A stand-in replica: says which GPU, and which node, Ray gave it."""

    def where(self) -> dict[str, Any]:
        import ray

        return {
            "gpus": [str(g) for g in ray.get_gpu_ids()],
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "node_id": ray.get_runtime_context().get_node_id(),
        }


def card(**extra: Any) -> GrpoConfig:
    return GrpoConfig.model_validate(
        {"model": "base", "table": {"name": "demo.chat"}, "out": "run-1", "rollout": "async"}
        | extra
    )


@pytest.fixture(scope="module")
def two_fake_gpus() -> Iterator[Any]:
    import ray

    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    with running_cluster(path, extra_args=["--num-gpus=2"]) as cluster:
        ray.init(address=cluster.gcs_address, logging_level=logging.WARNING)
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        try:
            yield ray
        finally:
            ray.shutdown()


def test_a_colocated_learner_and_its_replica_share_one_gpu(
    two_fake_gpus: Any, tiny_checkpoint: Path, tmp_path: Path
) -> None:
    """The job's own calls: the learner's actor started in the colocated group
    (start_remote_learner), the replica with the pool's options for that group."""
    from trainers.async_rl.learner_host import LEARNER_CPUS, start_remote_learner
    from trainers.async_rl.learner_setup import learner_spec
    from trainers.async_rl.placement import plan_placement
    from trainers.async_rl.pool import Pool

    ray = two_fake_gpus
    cfg = card(placement="colocated", weight_sync="nccl", device="auto")
    placement = plan_placement(cfg, "cuda", LEARNER_CPUS)
    spec = learner_spec(cfg, BaseModelRef("base", tiny_checkpoint), 0, tmp_path, placement)
    learner, sync, seats = start_remote_learner(
        ray, placement, spec, name="test-colocated-learner", timeout_s=120
    )
    probe = None
    try:
        pool = Pool(ray, "unused", tag="test-colocated", placement=placement, group=seats.group)
        probe = ray.remote(GpuProbe).options(**pool.replica_options(0)).remote()
        replica = ray.get(probe.where.remote(), timeout=120)
        assert seats.where is not None
        [where] = seats.where
        # One GPU, seen by both as their only one: vLLM starts on the learner's GPU.
        assert where["cuda_visible_devices"] == replica["cuda_visible_devices"]
        assert where["gpus"] == replica["gpus"] and len(replica["gpus"]) == 1
        assert where["node_id"] == replica["node_id"]
        # Their shares fill that GPU: the other one is whole, free for anything else.
        assert ray.available_resources().get("GPU") == 1.0
        assert where["device"] == "cpu"  # fake GPUs: torch sees none
    finally:
        if probe is not None:
            ray.kill(probe)
        learner.close()
        seats.release(ray)


def test_a_colocation_ray_cannot_seat_fails_saying_what_it_asked(
    two_fake_gpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both GPUs 0.6 taken: 0.8 of a GPU is free, but no one GPU is whole, so the
    learner and its replica cannot share one; the group is refused within its time."""
    from podium.errors import PodiumError
    from trainers.async_rl import placement as placing

    ray = two_fake_gpus
    monkeypatch.setattr(placing, "LEARNER_GROUP_TIMEOUT_S", 5.0)
    halves = [ray.remote(GpuProbe).options(num_cpus=0, num_gpus=0.6).remote() for _ in range(2)]
    try:
        wheres = ray.get([h.where.remote() for h in halves], timeout=120)
        assert sorted(w["cuda_visible_devices"] for w in wheres) == ["0", "1"]
        cfg = card(placement="colocated", weight_sync="nccl", device="cuda")
        plan = placing.plan_placement(cfg, "cuda", 1.0)
        with pytest.raises(PodiumError) as caught:
            placing.reserve_learner(ray, plan, name="test-unseatable")
        line = str(caught.value)
        assert (
            "the learner and its replica (one GPU" in line
            and "GPU 0.8 free of 2" in line
            and "within 5 s" in line
        ), line
    finally:
        for half in halves:
            ray.kill(half)


def test_two_learner_ranks_on_cuda_train_on_the_gpus_their_seats_hold(
    two_fake_gpus: Any, tmp_path: Path
) -> None:
    from trainers.async_rl.learner_setup import rank_devices, rank_spec
    from trainers.async_rl.placement import hold_learner_seats, plan_placement

    ray = two_fake_gpus
    cfg = card(learner_ranks=2, device="cuda")
    seats = hold_learner_seats(ray, plan_placement(cfg, "cuda"), name="test-ranks")
    try:
        node = ray.get_runtime_context().get_node_id()
        devices = rank_devices(seats, node, None, "cuda")
        assert sorted(devices) == ["cuda:0", "cuda:1"]  # a GPU a rank, none shared
        spec = rank_spec(cfg, BaseModelRef("base", tmp_path), devices, 0, tmp_path)
        assert spec.device == "cuda" and sorted(spec.gpus or []) == [0, 1]
        assert [f"cuda:{spec.gpu(r)}" for r in range(2)] == devices
        # Seen from a process that shows only GPU 1 (CUDA_VISIBLE_DEVICES=1), the rank
        # holding GPU 1 trains on its cuda:0; the other GPU is hidden from it: refused.
        from podium.errors import PodiumError

        with pytest.raises(PodiumError, match="hidden from the job's process"):
            rank_devices(seats, node, "1", "cuda")
    finally:
        seats.release(ray)
