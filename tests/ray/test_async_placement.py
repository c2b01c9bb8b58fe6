"""An async run's learner and replicas, and generation replicas, on a real Ray head that
declares three fake GPUs (`ray start --num-gpus=3` on a CPU host): Ray hands each asker
a CUDA_VISIBLE_DEVICES of its own, so placement is tested without a GPU and without
vLLM. The head's node address is this host's routable IP, as on a real cluster, so the
addresses Podium hands out inside Ray can be told from loopback."""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import running_cluster

pytestmark = pytest.mark.ray

LOOPBACK = "127.0.0.1"
NAME_FREED_S = 60


def _named(ray: Any, name: str) -> bool:
    try:
        ray.get_actor(name)
    except ValueError:
        return False
    return True


class GpuProbe:
    """A stand-in replica: says which GPU Ray gave it (vLLM would start on that one)."""

    def where(self) -> dict[str, Any]:
        import ray

        return {
            "gpus": [str(g) for g in ray.get_gpu_ids()],
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }


@pytest.fixture(scope="module")
def fake_gpu_ray() -> Iterator[Any]:
    import ray
    from ray._private.services import node_ip_address_from_perspective

    host_ip = node_ip_address_from_perspective()
    if host_ip.startswith("127."):
        pytest.skip("this host has no address but loopback to give a Ray node")
    venv_bin = str(Path(sys.executable).parent)
    path = f"{venv_bin}:{os.environ.get('PATH', '')}"
    with running_cluster(path, node_ip=host_ip, extra_args=["--num-gpus=3"]) as cluster:
        ray.init(
            address=cluster.gcs_address,
            _node_ip_address=host_ip,
            logging_level=logging.WARNING,
        )
        # The stand-in actor class travels by value: Ray's workers cannot import tests.
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        try:
            yield ray
        finally:
            ray.shutdown()


class Sleeper:
    """A stand-in actor whose call takes as long as asked."""

    def nap(self, seconds: float) -> float:
        time.sleep(seconds)
        return seconds


def test_a_call_into_an_actor_ends_when_the_gcs_has_its_node_dead(fake_gpu_ray: Any) -> None:
    """`get_on_node` is `ray.get` on a live node, across several of its checks; on a node
    the GCS does not have alive, a call still running ends with NodeDiedError instead
    of waiting for an actor's death that may never reach this process."""
    from ray.exceptions import NodeDiedError

    from podium.cluster import get_on_node, node_alive

    ray = fake_gpu_ray
    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0)(Sleeper).remote()
    try:
        assert node_alive(ray, here)
        assert get_on_node(ray, actor.nap.remote(1.0), here, every_s=0.2) == 1.0
        gone = "ff" * 28  # no node the GCS has alive
        assert not node_alive(ray, gone)
        running = actor.nap.remote(600.0)
        with pytest.raises(NodeDiedError, match=gone):
            get_on_node(ray, running, gone, every_s=0.2)
        ready, _ = ray.wait([running], timeout=0)
        assert not ready  # ended by the node's state, not by the call's end
    finally:
        ray.kill(actor)


def test_the_learner_and_each_replica_get_a_gpu_of_their_own(fake_gpu_ray: Any) -> None:
    from trainers.async_rl.placement import hold_learner_seats, plan_placement
    from trainers.async_rl.pool import Pool

    ray = fake_gpu_ray
    placement = plan_placement(SimpleNamespace(learner_ranks=1, replicas=2), "cuda")
    seats = hold_learner_seats(ray, placement, name="test-learner")
    probes: list[Any] = []
    try:
        pool = Pool(ray, "unused", tag="test", placement=placement)  # the real options
        probe_cls = ray.remote(GpuProbe)
        probes = [probe_cls.options(**pool.replica_options(i)).remote() for i in range(2)]
        replicas = ray.get([p.where.remote() for p in probes], timeout=60)
        assert seats.where is not None
        learner = seats.where[0]

        devices = [learner["cuda_visible_devices"]] + [r["cuda_visible_devices"] for r in replicas]
        assert sorted(devices) == ["0", "1", "2"], devices  # three GPUs, none shared
        assert learner["gpus"] == [learner["cuda_visible_devices"]]
        # All three are taken: a third replica waits for a GPU instead of sharing one.
        extra = probe_cls.options(**pool.replica_options(1)).remote()
        probes.append(extra)
        ready, _ = ray.wait([extra.where.remote()], timeout=3)
        assert not ready
    finally:
        for probe in probes:
            ray.kill(probe)
        seats.release(ray)


def test_the_rendezvous_sent_to_a_replica_is_the_nodes_address_in_ray(
    fake_gpu_ray: Any, tmp_path: Path
) -> None:
    from trainers.weight_sync import ReplicaEndpoint, make_weight_sync

    node_ip = fake_gpu_ray.util.get_node_ip_address()
    sync = make_weight_sync("gloo", work_dir=tmp_path)
    try:
        sent = sync._spec(ReplicaEndpoint(0, "http://replica:8000/v1"), 1)  # type: ignore[attr-defined]
        assert sent["host"] == node_ip
        assert sent["host"] != LOOPBACK
    finally:
        sync.close()


def test_a_replica_the_cluster_cannot_place_fails_its_start_saying_why(fake_gpu_ray: Any) -> None:
    """All three GPUs (and both CPUs) taken, a replacement (or a scale-out) asking for
    one is not queued for ever: its start fails within the stated time, naming what it
    asked for and what the cluster has, and its actor is gone. Before, `Pool.start`
    waited without end."""
    from podium.errors import PodiumError
    from trainers.async_rl.placement import hold_learner_seats, plan_placement
    from trainers.async_rl.pool import Pool

    ray = fake_gpu_ray
    placement = plan_placement(SimpleNamespace(learner_ranks=1, replicas=2), "cuda")
    seats = hold_learner_seats(ray, placement, name="test-unplaced-learner")
    pool = Pool(ray, "unused", tag="test-unplaced", placement=placement, place_timeout_s=5)
    probe_cls = ray.remote(GpuProbe)
    probes = [probe_cls.options(**pool.replica_options(i)).remote() for i in range(2)]
    try:
        ray.get([p.where.remote() for p in probes], timeout=300)  # the other two GPUs
        with pytest.raises(PodiumError) as caught:
            pool.start([2], generation=1)
        line = str(caught.value)
        assert "replica(s) [2]: 1 of 1 actor(s) asking for 1 CPU, 1 GPU each" in line, line
        assert "GPU 0 free of 3" in line, line
        assert 2 not in pool.actors
        # Killed: its name is free again once the GCS has taken the kill, which
        # `ray.kill` does not wait for (CI, at load: still named just after).
        name, deadline = pool.actor_name(2, 1), time.monotonic() + NAME_FREED_S
        while _named(ray, name):
            assert time.monotonic() < deadline, f"{name} still named {NAME_FREED_S} s after"
            time.sleep(0.5)
    finally:
        for probe in probes:
            ray.kill(probe)
        seats.release(ray)


def test_generation_replicas_ask_for_a_gpu_where_the_cluster_has_them(fake_gpu_ray: Any) -> None:
    """`podium generate --replicas 3` on the 3-GPU, 2-CPU head: each replica asks for a
    CPU and, by default where the cluster declares GPUs, a GPU; the third cannot be
    placed, so the start fails saying so instead of waiting (no vLLM starts: every
    replica is placed before any server is)."""
    from generators.replicas import replicas
    from podium.errors import PodiumError
    from podium.reporting import Reporter

    with (
        pytest.raises(PodiumError) as caught,
        replicas("unused", 3, urls=[], reporter=Reporter(), place_timeout_s=5),
    ):
        pass
    line = str(caught.value)
    # What each asked for (a GPU: the cluster declares some) and what the cluster has;
    # how many are free at that moment depends on the earlier tests' actors going.
    assert "of 3 actor(s) asking for 1 CPU, 1 GPU each" in line, line
    assert re.search(r"CPU \d+ free of 2, GPU \d+ free of 3", line), line


def test_the_learner_runs_in_an_actor_on_its_own_gpu_and_its_loss_fails_the_run_clearly(
    fake_gpu_ray: Any, tiny_checkpoint: Path, tmp_path: Path
) -> None:
    """On a cluster with GPUs the learner is an actor holding a GPU of its own (the
    job's process trains nothing); its step is the one-process learner's step (same
    samples, same loss and weights after), and an actor lost mid-run fails the next
    call with a line naming it, instead of Ray's page or a hang."""
    import torch

    from podium.errors import PodiumError
    from trainers.async_rl.learner import LearnerSettings, Sample
    from trainers.async_rl.learner_host import LearnerSpec, build_learner, start_remote_learner
    from trainers.async_rl.placement import plan_placement

    ray = fake_gpu_ray
    spec = LearnerSpec(
        checkpoint=str(tiny_checkpoint),
        device="auto",  # fake GPUs: torch sees none, so the actor trains on CPU
        settings=LearnerSettings(learning_rate=1e-2, temperature=0.7),
        pad_token_id=0,
        sync_backend="gloo",
        work_dir=str(tmp_path),
    )
    samples = [
        Sample([1, 42, 7, 99], [5, 6, 7], [-2.0, -1.5, -3.0], 1.0),
        Sample([1, 42, 7, 99], [8, 9], [-1.0, -2.5], -1.0),
    ]
    placement = plan_placement(SimpleNamespace(learner_ranks=1, replicas=2), "cuda")
    learner, sync, seats = start_remote_learner(
        ray, placement, spec, name="test-learner-actor", timeout_s=120
    )
    try:
        assert seats.where is not None
        where = seats.where[0]
        assert where["device"] == "cpu" and where["gpus"] == [where["cuda_visible_devices"]]
        assert where["cuda_visible_devices"] in {"0", "1", "2"}
        assert where["node"] != LOOPBACK

        here = build_learner(spec, "cpu")
        remote_stats = learner.step(samples)
        # The actor runs on one thread (OMP_NUM_THREADS=1, its seat's CPU): the step here
        # sums in its order only on one thread too. On two, AdamW's first step turned a
        # last-bit difference in a near-zero gradient into a whole step of the learning
        # rate (a v_proj weight, run alone in one process).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            local_stats = here.step(samples)
        finally:
            torch.set_num_threads(threads)
        assert remote_stats.loss == pytest.approx(local_stats.loss, rel=1e-5)
        trained = learner.full_model().state_dict()
        for name, value in here.model.state_dict().items():
            assert torch.allclose(trained[name], value, atol=1e-6), name

        ray.kill(seats.holders[0])  # type: ignore[index]
        with pytest.raises(PodiumError, match="the learner was lost with its actor on node"):
            learner.step(samples)
    finally:
        sync.close()
        seats.release(ray)
