"""A follower learner rank (see sharded.py), started by rank 0 as

    python -m trainers.async_rl.learner_rank RANK SPEC_JSON

It runs rank 0's commands until "stop". A push that fails here (a replica died) is
printed and not fatal: rank 0 verifies every push and decides what the job does.
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


def main(argv: list[str]) -> None:
    import torch.distributed as dist

    from trainers.weight_sync import ReplicaEndpoint, make_weight_sync

    rank, spec = int(argv[0]), RankSpec.from_json(argv[1])
    learner = build_rank(spec, rank)
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
            kind, *args = receive_command()
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


if __name__ == "__main__":
    main(sys.argv[1:])
