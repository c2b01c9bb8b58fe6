"""The seams of an async GRPO run (`run.AsyncRun`), as the run uses them.

Each is a `typing.Protocol`, so the run depends on what it calls and nothing more, and
mypy checks that every real implementation fits:

- `PolicyLearner`: `learner.Learner` (one process) and `sharded.ShardedLearner` (rank 0
  of R processes holding FSDP2-sharded parameters);
- `Followers`: the other R - 1 ranks as rank 0 starts and watches them
  (`rank_workers.py`: Ray actors, or processes where there is no Ray);
- `WeightPusher`: the weight transfer, every backend of `trainers.weight_sync` (gloo,
  nccl, disk: `WeightSync` subclasses);
- `ReplicaGroup`: the generation replicas and the weight version each holds
  (`pool.Pool`).

Nothing here is imported at run time but `Protocol` itself and `LearnerLost` (what a
lost learner rank raises): the types named in the signatures (torch, the learner's
samples) load only where they are used.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from podium.errors import PodiumError

if TYPE_CHECKING:
    import torch

    from podium.reporting import Reporter
    from trainers.async_rl.learner import Sample, StepStats
    from trainers.async_rl.placement import Placement
    from trainers.weight_sync.base import Snapshot, SyncRecord
    from trainers.weight_sync.replica_calls import ReplicaEndpoint

NamedTensors = Iterable[tuple[str, "torch.Tensor"]]


class LearnerLost(PodiumError):
    """A learner rank is gone (its process, or its actor with its node): the job fails,
    keeping the checkpoints it saved (the weights in hand went with the rank)."""


class PolicyLearner(Protocol):
    """The policy being trained: one GRPO step at a time, its weights to push, and the
    hooks through which rank 0 drives the other learner ranks (no-ops with one rank)."""

    def step(self, samples: Sequence[Sample]) -> StepStats:
        """One GRPO step on a step's samples (truncated-IS REINFORCE: learner.py)."""
        ...

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """The weights to push, named as the HF checkpoint names them."""
        ...

    def connect(self, endpoints: Sequence[tuple[int, str]]) -> None:
        """The other learner ranks join the replicas' transfer groups: (index, base URL)."""
        ...

    def announce_push(self, version: int) -> None:
        """The other learner ranks start pushing their rows of `version`."""
        ...

    def announce_replica(self, index: int, base_url: str, version: int) -> None:
        """The other learner ranks send a new replica their rows of `version`."""
        ...

    def full_model(self) -> torch.nn.Module:
        """The model with whole weights, to save as a checkpoint."""
        ...

    def check(self) -> None:
        """Raise `LearnerLost` naming a learner rank that is lost (its process or actor
        gone, with its node); the run calls it while it waits for samples."""
        ...

    def close(self) -> None:
        """Stop the other learner ranks."""
        ...


class Followers(Protocol):
    """Ranks 1..R-1 of a sharded learner, started and watched by rank 0: Ray actors in
    a job, processes where there is no Ray (rank_workers.py)."""

    where: list[dict[str, Any]]  # each one's rank, node, device, CUDA_VISIBLE_DEVICES

    def lost(self, wait_s: float = 0.0) -> str | None:
        """A line naming the first follower gone (waiting up to `wait_s` for one to be
        seen gone), or None while all run."""
        ...

    def wait(self, timeout_s: float) -> None:
        """After "stop": each ends."""
        ...

    def kill(self) -> None: ...


class WeightPusher(Protocol):
    """Moves the learner's weights into the replicas, verified (`trainers.weight_sync`)."""

    replicas: dict[int, ReplicaEndpoint]  # the connected replicas, by index

    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        """Reach the replicas and warm up every connection, once, before the first push."""
        ...

    def snapshot(self, named_tensors: NamedTensors, *, copy: bool = True) -> Snapshot:
        """The plan and this rank's tensors, copied: the learner may go on training."""
        ...

    def push_snapshot(
        self, snap: Snapshot, version: int, only: Sequence[int] | None = None
    ) -> SyncRecord:
        """Load `snap` into every replica (or replicas `only`) as `version`; the
        verified record."""
        ...

    def add_replica(
        self, replica: ReplicaEndpoint, named_tensors: NamedTensors, version: int
    ) -> SyncRecord:
        """A new or restarted replica joins and gets the current weights."""
        ...

    def drop_replica(self, index: int) -> None:
        """Push nothing more to replica `index` (the run goes on without it)."""
        ...

    def close(self) -> None: ...


class ReplicaGroup(Protocol):
    """The replicas (Ray actors, each serving the policy on vLLM), the version each
    holds, and their replacement.

    `ray` is the ray module and `actors` hold Ray actor handles: both are reached by
    method name (`actor.generate.remote(...)`), which no static type describes."""

    ray: Any
    actors: dict[int, Any]
    infos: dict[int, dict[str, Any]]  # replica -> what its start reported (its servers)
    held: dict[int, int]  # replica -> the weight version it holds
    replacing: set[int]  # replicas being replaced: no push counts for them
    restarts: int
    stopping: threading.Event  # set when the run ends: a replacement stops waiting for a seat
    placement: Placement  # what each replica reserves (`replica_seat`: also a new one)

    def actor_name(self, index: int, generation: int = 0) -> str:
        """The Ray actor name of replica `index` (of its `generation`-th replacement)."""
        ...

    def start(self, indices: list[int], generation: int = 0) -> list[ReplicaEndpoint]:
        """Start replicas `indices` (a replacement with a new `generation`); their
        endpoints, in order."""
        ...

    def alive(self, index: int) -> bool: ...

    def stop(self, reporter: Reporter) -> None:
        """Stop every replica and reap its server (a push waiting on one then fails)."""
        ...


class SaveCheckpoint(Protocol):
    """Saves the learner's weights as the run's checkpoint of `step`."""

    def __call__(self, step: int, *, final: bool) -> object: ...
