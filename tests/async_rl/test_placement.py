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


def test_on_cpu_a_follower_rank_has_a_cpu_bundle_and_a_replica_a_cpu() -> None:
    """Rank 0 is the job's process (it reserves nothing); each other rank is an actor in
    a bundle of one CPU of the learner's group (rank_workers.py)."""
    placement = plan_placement(card(learner_ranks=3, replicas=2), "cpu")

    assert placement.learner_bundles == [{"CPU": 1.0}, {"CPU": 1.0}]
    assert [(s.index, s.bundle, s.num_cpus) for s in placement.learner] == [
        (0, None, 0.0),
        (1, 0, 1.0),
        (2, 1, 1.0),
    ]
    assert all(s.num_gpus == 0 for s in placement.learner)
    assert [ray_options(s) for s in placement.replicas] == [{"num_cpus": 1.0}] * 2
    assert plan_placement(card(learner_ranks=1), "cpu").learner_bundles == []


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


class ClusterThatPlacesNothing:
    """Ray as a placement wait sees it when no actor ever gets a seat: every wait ends
    with the actor pending, and says how long it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.killed: list[object] = []

    def wait(self, refs: list[object], num_returns: int, timeout: float) -> tuple[list, list]:  # type: ignore[type-arg]
        self.waits.append(timeout)
        return [], list(refs)

    def get(self, refs: list[object]) -> list[object]:
        return []

    def kill(self, actor: object) -> None:
        self.killed.append(actor)

    def available_resources(self) -> dict[str, float]:
        return {"CPU": 0.0, "GPU": 0.0}

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0, "GPU": 2.0}


class Unplaced:
    class __ray_ready__:  # noqa: N801 - Ray's name for an actor's readiness call
        @staticmethod
        def remote() -> object:
            return object()


def test_a_placement_wait_ends_when_its_run_has_ended() -> None:
    """A replacement still waiting for a seat when its run ends (failed, or done) stops
    waiting at its next look instead of the whole 300 s (the run's end then waited for
    it), and says what it asked for; with no one to ask, it waits the whole time."""
    from podium.cluster import STOPPING_POLL_S, placement_shortfall

    ray, actor = ClusterThatPlacesNothing(), Unplaced()
    ended = [False, True]
    line = placement_shortfall(
        ray, [actor], {"CPU": 1.0, "GPU": 1.0}, "replica(s) [1]", 300.0, lambda: ended.pop(0)
    )
    assert ray.waits == [STOPPING_POLL_S, STOPPING_POLL_S] and ray.killed == [actor]
    assert line.startswith("replica(s) [1]: 1 of 1 actor(s) asking for 1 CPU, 1 GPU each")

    ray = ClusterThatPlacesNothing()
    placement_shortfall(ray, [actor], {"CPU": 1.0}, "replica(s) [1]", 300.0)
    assert len(ray.waits) == 1 and ray.waits[0] > 299  # one wait: the whole time
