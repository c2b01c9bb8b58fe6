"""The GPU seats of issue 49's card placements on a real Ray head declaring two fake GPUs
(`ray start --num-gpus=2` on a CPU host): a colocated learner and its replica get the
same GPU (one bundle, their shares adding to it), a colocation Ray cannot seat fails
within its stated time saying what it asked, and two learner ranks on `device: cuda`
run as the job runs them, rank 0 here and rank 1 a Ray actor, each on a GPU of its own,
and step as one process does."""

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


def test_two_learner_ranks_run_as_actors_on_their_own_gpus_and_step_like_one_process(
    two_fake_gpus: Any, tiny_checkpoint: Path, tmp_path: Path
) -> None:
    """A card's `learner_ranks: 2` on `device: cuda`, set up by the job's own calls: rank
    0 (this process) on the GPU its seat holds, rank 1 a Ray actor in the other bundle
    of the learner's group, on the GPU Ray gave it. The job's record names both ranks
    with their node and devices; the two ranks (gloo: the GPUs are fake) take the step
    one process takes on the same batch, and the actor killed fails the next step with
    a line naming it (the job then keeps its checkpoints: LearnerLost)."""
    import dataclasses

    import torch
    from learner_steps import step_both

    from trainers.async_rl.learner import LearnerSettings, Sample
    from trainers.async_rl.learner_setup import (
        RankSeats,
        learner_nodes,
        rank_devices,
        rank_spec,
    )
    from trainers.async_rl.placement import hold_learner_seats, plan_placement
    from trainers.async_rl.protocols import LearnerLost
    from trainers.async_rl.sharded import ShardedLearner

    ray = two_fake_gpus
    cfg = card(learner_ranks=2, device="cuda")
    placement = plan_placement(cfg, "cuda")
    seats = hold_learner_seats(ray, placement, name="test-ranks")
    try:
        node = ray.get_runtime_context().get_node_id()
        devices = rank_devices(seats, node, None, "cuda")
        assert len(devices) == 1 and devices[0] in {"cuda:0", "cuda:1"}  # rank 0's seat
        spec = rank_spec(cfg, BaseModelRef("base", tiny_checkpoint), devices, 0, tmp_path)
        assert spec.device == "cuda" and [f"cuda:{spec.gpu(0)}"] == devices
        # Fake GPUs: torch sees none, so both ranks train on the CPU over gloo, from
        # the seats a GPU run takes; two minibatches over two epochs (the clip acts).
        settings = LearnerSettings(
            learning_rate=1e-2, temperature=0.7, minibatches=2, epochs=2, micro_batch=1
        )
        spec = dataclasses.replace(spec, device="cpu", gpus=None, settings=settings)
        record: list[dict[str, Any]] = []

        def kill_rank_1(sharded: ShardedLearner, samples: list[Sample]) -> None:
            record.extend(learner_nodes(seats, devices, sharded))
            ray.kill(ray.get_actor("test-ranks-rank-1"))
            with pytest.raises(LearnerLost) as lost:
                sharded.step(samples)
            rank1 = record[1]
            assert str(lost.value).startswith(
                f"learner rank 1 was lost with its actor on node {rank1['node']} "
                f"(CUDA_VISIBLE_DEVICES={rank1['cuda_visible_devices']})"
            ), lost.value

        starter = RankSeats(ray, placement, seats, "test-ranks", 120.0).starter()
        # Ray runs the actor on one thread (OMP_NUM_THREADS=1: its seat's CPUs); the
        # one-process learner and rank 0 here then sum in the same order as it does
        # (AdamW's first steps turn a last-bit difference in a near-zero gradient into
        # a whole step of the learning rate).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            both = step_both(
                tiny_checkpoint,
                tmp_path,
                settings,
                "cpu",
                spec=spec,
                start_followers=starter,
                then=kill_rank_1,
            )
        finally:
            torch.set_num_threads(threads)
        # The record: rank 0 in this process, rank 1 an actor; a GPU each, not shared.
        assert [r["rank"] for r in record] == [0, 1]
        rank0, rank1 = record
        assert rank0["actor"] is None and rank1["actor"], record
        assert rank0["node"] and rank0["node"] == rank1["node"]  # the one node
        assert {rank0["cuda_visible_devices"], rank1["cuda_visible_devices"]} == {"0", "1"}
        assert rank0["device"] == devices[0] and rank1["device"] == "cpu"
        # The same step as one process (test_sharded_learner.py's tolerances).
        got, expected = both.got, both.expected
        assert abs(got.loss - expected.loss) < 1e-5 and got.tokens == expected.tokens
        assert expected.clip_fraction > 0
        assert abs(got.clip_fraction - expected.clip_fraction) < 1e-6
        for name, value in both.single.items():
            assert torch.allclose(both.whole[name], value, atol=2e-5, rtol=0), name
        assert any(not torch.equal(v, both.before[n]) for n, v in both.single.items())
    finally:
        seats.release(ray)
