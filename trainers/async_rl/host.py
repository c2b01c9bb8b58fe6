"""What an async GRPO card needs of the machine and the catalog it runs against.

The card's own rules (LoRA, learner ranks against the batch, ...) are its model's
(`trainers.config.GrpoConfig`), so a command refuses them as it parses the card. These
depend on where it runs: the grpo preflight calls `check_async_host` at submit, and the
job calls it again when it starts (a worker may run elsewhere, and a rollouts table or a
vLLM server may have appeared since). Importing this module never imports torch.

    check_async_host(cfg, checkpoint)   # InvalidInput naming what to change
"""

from __future__ import annotations

from pathlib import Path

from podium.errors import InvalidInput
from trainers.async_rl.memory import check_async_memory
from trainers.async_rl.rollouts import check_rollouts_free, default_rollouts_name
from trainers.config import GrpoConfig


def rollouts_table(cfg: GrpoConfig) -> str:
    return cfg.rollouts or default_rollouts_name(cfg.out)


def check_async_host(cfg: GrpoConfig, checkpoint: str | Path | None = None) -> None:
    """Refuse an async run this host cannot hold: sharded learner ranks on more GPUs than
    it shows, a rollouts table that exists, replicas and learner that do not fit in
    memory (`checkpoint`: the starting model's folder, to size them)."""
    if cfg.learner_ranks > 1 and cfg.device != "cpu":
        check_rank_gpus(cfg)
    check_rollouts_free(rollouts_table(cfg))
    if checkpoint:
        check_async_memory(cfg, checkpoint)


def check_rank_gpus(cfg: GrpoConfig) -> None:
    """`learner_ranks` R on a GPU host trains rank r on a GPU of its own of the job's
    host (FSDP2 over NCCL, sharded.py): it needs R GPUs there. `device: auto` on a host
    without a GPU shards over gloo on CPU instead; `device: cuda` there is refused as
    every card asking for cuda is (trainers.runtime.resolve_device)."""
    import os

    import torch  # only for sharded runs

    from trainers.runtime import resolve_device

    if resolve_device(cfg.device) != "cuda":
        return
    problem = rank_gpus_problem(
        cfg.learner_ranks, torch.cuda.device_count(), os.environ.get("CUDA_VISIBLE_DEVICES")
    )
    if problem:
        raise InvalidInput(problem)


def rank_gpus_problem(ranks: int, gpus: int, visible: str | None) -> str | None:
    """Why `ranks` learner ranks cannot train on a host showing `gpus` GPUs (None: they
    can)."""
    if gpus >= ranks:
        return None
    return (
        f"learner_ranks {ranks} on a GPU trains each rank on a GPU of its own on the job's "
        f"host (FSDP2 over NCCL), so it needs {ranks} GPUs; this host shows {gpus} "
        f"(CUDA_VISIBLE_DEVICES={visible}). Lower --learner-ranks to {max(gpus, 1)}, run it "
        f"where {ranks} GPUs are free, or set --device cpu (gloo)."
    )
