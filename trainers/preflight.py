"""Checks before an sft or grpo job exists (see podium/jobs/preflight.py): the starting
model is registered (the card names its checkpoint, not an alias) and every reward
rule is known, so a typo fails before a worker loads torch."""

from __future__ import annotations

from podium.models import get_model
from trainers.config import GrpoConfig, TrainConfig


def train(config: TrainConfig) -> TrainConfig:
    if isinstance(config, GrpoConfig):
        from trainers.rewards import check_rewards

        check_rewards(config.rewards)
    return config.model_copy(update={"model": get_model(config.model).name})
