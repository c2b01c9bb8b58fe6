"""The async fields of a grpo card: what the job refuses before any model loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from podium.errors import InvalidInput
from trainers.async_rl.job import check_async_card, rollouts_table
from trainers.config import GrpoConfig


def card(**extra: Any) -> GrpoConfig:
    return GrpoConfig.model_validate(
        {"model": "base", "table": {"name": "demo.chat"}, "out": "run-1", "rollout": "async"}
        | extra
    )


def test_defaults_and_the_derived_rollouts_table(podium_home: Path) -> None:
    cfg = card()
    assert (cfg.replicas, cfg.max_staleness, cfg.weight_sync, cfg.learner_ranks) == (
        1,
        1,
        "gloo",
        1,
    )
    assert rollouts_table(cfg) == "demo.run_1_rollouts"
    assert rollouts_table(card(rollouts="ns.mine")) == "ns.mine"
    check_async_card(cfg)


def test_what_the_async_path_refuses(podium_home: Path) -> None:
    with pytest.raises(InvalidInput, match="method: full"):
        check_async_card(card(method="lora"))
    check_async_card(card(learner_ranks=2))  # sharded learner ranks run
    with pytest.raises(InvalidInput, match="learner_ranks 8 need at least that many"):
        check_async_card(card(learner_ranks=8, batch_size=4, grad_accum=1, num_generations=4))
    with pytest.raises(InvalidInput, match="gloo on CPU"):
        check_async_card(card(learner_ranks=2, device="cuda"))
    with pytest.raises(ValidationError):
        card(max_staleness=-1)
    with pytest.raises(InvalidInput, match="not allowed"):
        card(rollouts="bad name!")


def test_a_sync_card_refuses_async_only_fields_instead_of_ignoring_them() -> None:
    with pytest.raises(ValidationError, match="learner_ranks only apply to rollout: async"):
        card(rollout="sync", learner_ranks=2)
    with pytest.raises(ValidationError, match="replicas, rollouts only apply"):
        card(rollout="sync", replicas=2, rollouts="ns.x")
    assert card(rollout="sync").rollout == "sync"  # their defaults are fine
