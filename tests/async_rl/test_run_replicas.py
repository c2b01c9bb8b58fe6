"""How an async run (trainers/async_rl/run.py) treats its replicas, with a replica group
and a transfer that are stand-ins answering as the real ones do (`Pool.start` raises the
placement line: tests/ray/test_async_placement.py; a push lands verified):

- a replica lost whose replacement the cluster cannot place: the run goes on with the
  others, says so, and pushes nothing more to it; the last replica lost, or one of a
  sharded learner's, still fails the job with the placement line;
- pushes queued behind a slow one: only the newest is pushed, the replicas skip straight
  to it."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from train_fixtures import RecordingReporter

from podium.errors import PodiumError
from trainers.async_rl.run import AsyncRun
from trainers.config import GrpoConfig
from trainers.weight_sync import ReplicaEndpoint, SyncRecord

NO_SEAT = (
    "replica(s) [1]: 1 of 1 actor(s) asking for 1 CPU, 1 GPU each were not placed and "
    "started within 300 s; the Ray cluster has CPU 0 free of 2, GPU 0 free of 2"
)


class NoRoomLeft:
    """Replicas 0..n-1, and a cluster with no seat for a replacement."""

    def __init__(self, replicas: int) -> None:
        self.ray: Any = None
        self.actors: dict[int, Any] = {r: object() for r in range(replicas)}
        self.infos: dict[int, dict[str, Any]] = {}
        self.held = dict.fromkeys(self.actors, 0)
        self.replacing: set[int] = set()
        self.restarts = 0
        self.stopping = threading.Event()

    def start(self, indices: list[int], generation: int = 0) -> list[ReplicaEndpoint]:
        raise PodiumError(NO_SEAT)

    def alive(self, index: int) -> bool:
        return index in self.actors and index not in self.replacing


@dataclass
class Transfer:
    replicas: dict[int, ReplicaEndpoint] = field(default_factory=dict)
    pushed: list[int] = field(default_factory=list)
    hold: threading.Event = field(default_factory=threading.Event)  # set: pushes land
    started: threading.Event = field(default_factory=threading.Event)  # a push is landing

    def drop_replica(self, index: int) -> None:
        self.replicas.pop(index, None)

    def snapshot(self, named_tensors: Any, *, copy: bool = True) -> Any:
        return None

    def push_snapshot(self, snap: Any, version: int, only: Any = None) -> SyncRecord:
        self.started.set()
        assert self.hold.wait(60), "the test never let the push land"
        self.pushed.append(version)
        verdicts = [{"replica": r, "match": True, "resumed": True} for r in self.replicas]
        return SyncRecord(version, "gloo", 10, 0.1, verdicts)


class Learner:
    def check(self) -> None:
        """Alive."""

    def named_tensors(self) -> Any:
        return iter(())

    def announce_push(self, version: int) -> None:
        """One rank."""


def run_with(replicas: int, learner_ranks: int = 1) -> tuple[AsyncRun, Any, Transfer]:
    cfg = GrpoConfig.model_validate(
        {
            "model": "tiny",
            "table": {"name": "demo.t"},
            "out": "fewer",
            "rollout": "async",
            "replicas": replicas,
            "learner_ranks": learner_ranks,
            "max_steps": 4,
            "batch_size": 4,
            "num_generations": 4,
        }
    )
    pool = NoRoomLeft(replicas)
    sync = Transfer({r: ReplicaEndpoint(r, f"http://r{r}") for r in range(replicas)})
    run = AsyncRun(cfg, RecordingReporter(), [], None, Learner(), sync, pool, None)  # type: ignore[arg-type]
    return run, pool, sync


def test_a_lost_replica_with_no_seat_for_a_replacement_leaves_the_run_with_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before, the placement line failed the job though replica 0 still generated."""
    run, pool, sync = run_with(replicas=2)
    assert run.replace(1) is False
    assert sorted(pool.actors) == [0] and sorted(sync.replicas) == [0]
    assert sorted(run.gen_locks) == [0] and 1 not in pool.held and not pool.replacing
    assert run.replicas_lost == [{"replica": 1, "reason": NO_SEAT}]
    assert "no replacement could be placed; the run goes on with 1 replica(s)" in caplog.text
    assert not run.errors


@pytest.mark.parametrize(("replicas", "ranks"), [(1, 1), (2, 2)])
def test_the_last_replica_or_a_sharded_learners_still_fails_with_the_placement_line(
    replicas: int, ranks: int
) -> None:
    run, pool, sync = run_with(replicas=replicas, learner_ranks=ranks)
    with pytest.raises(PodiumError, match=r"not placed and started within 300 s"):
        run.replace(replicas - 1)
    assert run.replicas_lost == [] and len(sync.replicas) == replicas


def test_pushes_queued_behind_a_slow_one_skip_to_the_newest() -> None:
    """Versions 2, 3 and 4 issued while version 1 is still landing: only 4 follows it
    (before, the replicas loaded 2, 3 and 4 one after another)."""
    from concurrent.futures import wait

    run, pool, sync = run_with(replicas=2)
    run.push(1)
    assert sync.started.wait(60)  # version 1 is landing: the next ones queue behind it
    for version in (2, 3, 4):
        run.push(version)
    sync.hold.set()
    wait(list(run.pushes), timeout=60)
    assert sync.pushed == [1, 4]
    assert run.pushes_skipped == [2, 3]
    assert [s["version"] for s in run.syncs] == [1, 4] and pool.held == {0: 4, 1: 4}
    run._push_thread.shutdown(wait=True)
