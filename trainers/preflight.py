"""Checks before an sft or grpo job exists (see podium/jobs/preflight.py): the starting
model is registered (the card names its checkpoint, not an alias), every reward rule is
known, and an async GRPO run fits this host (sharded learner ranks on CPU, a free
rollouts table, replicas and learner in the memory available), so a typo or an
impossible run fails before a worker loads torch. What needs only the card is refused
earlier, by the card's model (trainers/config.py)."""

from __future__ import annotations

from podium.models import get_model
from trainers.config import GrpoConfig, TrainConfig


def train(config: TrainConfig) -> TrainConfig:
    model = get_model(config.model)
    if isinstance(config, GrpoConfig):
        from trainers.rewards import check_rewards

        check_rewards(config.rewards)
        if config.rollout == "async":
            from trainers.async_rl.host import check_async_host

            check_async_host(config, model.path)
    return config.model_copy(update={"model": model.name})
