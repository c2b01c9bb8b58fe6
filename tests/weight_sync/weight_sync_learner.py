"""A learner rank for the n -> m test, run as its own process:

    python weight_sync_learner.py CHECKPOINT RANK RANKS HOST PORT VERSION BACKEND WORKDIR URL...

It loads the checkpoint, applies the same seeded change as the test's rank 0
(`perturbed`), joins the replicas' groups and pushes its planned rows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch


def perturbed(checkpoint: str, seed: int):  # type: ignore[no-untyped-def]
    """The checkpoint's model with every weight moved by seeded noise: what any learner
    rank given the same seed holds after "a training step"."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, param in sorted(model.named_parameters()):
            param.add_(torch.randn(param.shape, generator=generator) * 0.05)
    return model


def main(argv: list[str]) -> None:
    from trainers.weight_sync import ReplicaEndpoint, make_weight_sync

    checkpoint, rank, ranks, host, port, version, backend, work_dir, *urls = argv
    model = perturbed(checkpoint, seed=int(version))
    sync = make_weight_sync(
        backend,
        learner_ranks=int(ranks),
        rank=int(rank),
        work_dir=Path(work_dir),
        address=(host, int(port)),
    )
    sync.connect([ReplicaEndpoint(i, url) for i, url in enumerate(urls)])
    sync.push(model.named_parameters(), int(version))
    sync.close()


if __name__ == "__main__":
    main(sys.argv[1:])
