"""Where an async run's learner ranks and replicas go: a pure plan of the card's shape
and the device kind (the Ray side is tests/ray/test_async_placement.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from podium.errors import PodiumError
from trainers.async_rl.placement import learner_device, plan_placement, ray_options


def card(learner_ranks: int = 1, replicas: int = 2) -> SimpleNamespace:
    return SimpleNamespace(learner_ranks=learner_ranks, replicas=replicas)


def test_on_cuda_every_learner_rank_and_replica_asks_for_a_gpu_of_its_own() -> None:
    placement = plan_placement(card(learner_ranks=2, replicas=3), "cuda")

    assert placement.learner_bundles == [{"GPU": 1.0}, {"GPU": 1.0}]
    assert [s.bundle for s in placement.learner] == [0, 1]
    assert all(s.num_gpus == 1.0 for s in placement.learner + placement.replicas)
    # The replicas are outside the learner's group: they take the GPUs it left.
    assert all(s.bundle is None for s in placement.replicas)
    assert [ray_options(s) for s in placement.replicas] == [{"num_cpus": 1.0, "num_gpus": 1.0}] * 3


def test_on_cpu_nothing_is_reserved_beyond_a_cpu_per_replica() -> None:
    placement = plan_placement(card(learner_ranks=2, replicas=2), "cpu")

    assert placement.learner_bundles == []
    assert [ray_options(s) for s in placement.replicas] == [{"num_cpus": 1.0}] * 2
    assert all(s.num_gpus == 0 and s.bundle is None for s in placement.learner)


def test_a_learner_seat_needs_its_reserved_group() -> None:
    seat = plan_placement(card(), "cuda").learner[0]
    with pytest.raises(ValueError, match="reserve it"):
        ray_options(seat)


def test_the_learner_uses_the_gpu_ray_reserved_as_its_process_sees_it() -> None:
    where = {"node": "10.0.0.1", "node_id": "n1", "gpus": ["2"]}

    assert learner_device(where, "n1", None) == "cuda:2"
    assert learner_device(where, "n1", "1,2") == "cuda:1"
    with pytest.raises(PodiumError, match="not on the node the job runs on"):
        learner_device(where, "n2", None)
    with pytest.raises(PodiumError, match="hidden"):
        learner_device(where, "n1", "0,1")


def test_a_replica_added_while_the_job_runs_sits_like_the_planned_ones() -> None:
    """`podium jobs scale` adds replica indices the plan never had (it once raised
    IndexError for them)."""
    for device, options in (
        ("cuda", {"num_cpus": 1.0, "num_gpus": 1.0}),
        ("cpu", {"num_cpus": 1.0}),
    ):
        placement = plan_placement(card(replicas=1), device)
        added = placement.replica_seat(3)
        assert (added.role, added.index, added.bundle) == ("replica", 3, None)
        assert ray_options(added) == ray_options(placement.replica_seat(0)) == options
