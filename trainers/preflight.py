"""Checks before an sft or grpo job exists (see podium/jobs/preflight.py): the starting
model is registered (the card names its checkpoint, not an alias), every reward rule is
known, and an async GRPO run's replicas and learner fit in the memory available, so a
typo or an impossible run fails before a worker loads torch."""

from __future__ import annotations

from podium.models import get_model
from trainers.config import GrpoConfig, TrainConfig


def train(config: TrainConfig) -> TrainConfig:
    model = get_model(config.model)
    if isinstance(config, GrpoConfig):
        from trainers.rewards import check_rewards

        check_rewards(config.rewards)
        if config.rollout == "async" and model.path:
            from trainers.async_rl.memory import check_async_memory

            check_async_memory(config, model.path)
    return config.model_copy(update={"model": model.name})
