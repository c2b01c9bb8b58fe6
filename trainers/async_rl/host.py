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
    """Refuse an async run this host cannot hold: sharded learner ranks where training
    would go to a GPU, a rollouts table that exists, replicas and learner that do not fit
    in memory (`checkpoint`: the starting model's folder, to size them)."""
    if cfg.learner_ranks > 1 and cfg.device == "auto":
        from trainers.runtime import resolve_device  # torch: only for sharded runs

        if resolve_device(cfg.device) != "cpu":
            raise InvalidInput(
                "learner_ranks > 1 shards the learner over gloo on CPU; on a GPU host run one "
                "learner rank (--learner-ranks 1) or --device cpu."
            )
    check_rollouts_free(rollouts_table(cfg))
    if checkpoint:
        check_async_memory(cfg, checkpoint)
