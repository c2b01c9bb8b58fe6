"""A follower learner rank (see sharded.py): builds its shard of the model and runs rank
0's commands until "stop". In a job it is a Ray actor (`LearnerRank`, started by
rank_workers.start_rank_actors in its bundle of the learner's placement group); where
there is no Ray (the sharded learner driven directly, as the GPU bundle's test does) a
process of rank 0's:

    python -m trainers.async_rl.learner_rank RANK SPEC_JSON

A push that fails here (a replica died) is printed and not fatal: rank 0 verifies every
push and decides what the job does.
"""

from __future__ import annotations

import sys
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from trainers.async_rl.sharded import RankSpec, build_rank, gather_state, receive_command


def _settle(pending: list[Future[Any]], rank: int) -> None:
    for future in pending:
        exc = future.exception()
        if exc is not None:
            print(f"learner rank {rank}: a push failed: {exc}", file=sys.stderr, flush=True)
    pending.clear()


def serve(spec: RankSpec, rank: int, gpu: int | None = None) -> None:
    """Rank `rank` of `spec` (on CUDA index `gpu`, else spec.gpu(rank)) until "stop"."""
    import torch.distributed as dist

    from trainers.weight_sync import ReplicaEndpoint, make_weight_sync

    learner, commands = build_rank(spec, rank, gpu)
    sync = make_weight_sync(
        spec.sync_backend,
        learner_ranks=spec.ranks,
        rank=rank,
        work_dir=Path(spec.work_dir),
        address=(spec.host, spec.sync_port),
    )
    pending: list[Future[Any]] = []
    try:
        while True:
            kind, *args = receive_command(commands)
            if kind == "connect":
                sync.connect([ReplicaEndpoint(i, url) for i, url in args[0]])
            elif kind == "step":
                learner.step(args[0])
            elif kind == "push":
                pending.append(sync.push_async(learner.named_tensors(), int(args[0])))
            elif kind == "add":
                _settle(pending, rank)  # a replacement gets the weights after every push
                index, url, version = args
                try:
                    sync.add_replica(ReplicaEndpoint(index, url), learner.named_tensors(), version)
                except Exception as exc:  # noqa: BLE001 - rank 0 verifies and decides
                    print(f"learner rank {rank}: adding replica {index} failed: {exc}", flush=True)
            elif kind == "gather":
                gather_state(learner.model)
            elif kind == "stop":
                _settle(pending, rank)
                return
            else:
                raise ValueError(f"unknown learner command {kind!r}")
    finally:
        sync.close()
        if dist.is_initialized():
            dist.destroy_process_group()


class LearnerRank:
    """A follower rank as a Ray actor: Ray placed it in its bundle and, on GPUs, set its
    CUDA_VISIBLE_DEVICES to the one GPU of that bundle (its cuda:0)."""

    def __init__(self, spec: RankSpec, rank: int) -> None:
        from trainers.runtime import prepare_env

        prepare_env()
        self.spec, self.rank = spec, rank

    def where(self) -> dict[str, Any]:
        """Its node's address and devices, and the actor's id (the job's record)."""
        import ray

        from podium.cluster import actor_seat

        seat = actor_seat()
        device = "cuda:0" if self.spec.device == "cuda" else "cpu"
        return {
            **seat,
            "rank": self.rank,
            "device": device,
            "actor": ray.get_runtime_context().get_actor_id(),
        }

    def serve(self) -> None:
        serve(self.spec, self.rank, 0 if self.spec.device == "cuda" else None)


if __name__ == "__main__":
    serve(RankSpec.from_json(sys.argv[2]), int(sys.argv[1]))
