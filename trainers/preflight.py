"""Checks before an sft or grpo job exists (see podium/jobs/preflight.py), run once at
submit whichever way the run was started (command, card, Train page form): the starting
model is registered (the card names its checkpoint, not an alias), the new checkpoint's
name is free, every reward rule is known and can score this table (`validate:json-schema`
reads the schema stored on it; `exact_match` needs a reference answer that fits in
max_completion_length), and an async GRPO run fits this host (sharded learner
ranks on CPU, a free rollouts table, replicas and learner in the memory available), so a
typo or an impossible run fails before a worker loads torch. What needs only the card is
refused earlier, by the card's model (trainers/config.py)."""

from __future__ import annotations

from podium.models import get_model
from trainers.config import GrpoConfig, TrainConfig
from trainers.runtime import check_out_name


def train(config: TrainConfig) -> TrainConfig:
    model = get_model(config.model)
    check_out_name(config.out)
    if isinstance(config, GrpoConfig):
        from podium.store.catalog.catalog import load_table
        from trainers.rewards import check_exact_match_reachable, check_rewards

        table = config.table.name
        check_rewards(config.rewards, dict(load_table(table).properties), table)
        if model.path:
            check_exact_match_reachable(
                config.rewards,
                table,
                config.table.snapshot_id,
                model.path,
                config.max_completion_length,
            )
        if config.rollout == "async":
            from trainers.async_rl.host import check_async_host

            check_async_host(config, model.path)
    return config.model_copy(update={"model": model.name})
