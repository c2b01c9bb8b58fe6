"""The default GRPO run on the demo data has a learning signal at its first step: the
rewards of one prompt's completions differ (issue 45: exact_match with 24-token
completions returned 0 for all of them, the run went green and learned nothing).
The real base model (SmolLM2-135M), the card the Train page queues by default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from vllm_fixtures import base_checkpoint  # noqa: F401  (a fixture, requested by name)

from podium.app.table_choices import CONVERSATIONS, pick, table_choices
from podium.models.registry import register_model
from podium.store.write.demo import load_demo
from trainers.config import GrpoConfig
from trainers.grpo import run_grpo

pytestmark = pytest.mark.train


def test_default_grpo_on_demo_data_has_a_signal_at_step_one(
    podium_home: Path,
    base_checkpoint: Path,  # noqa: F811
    recorder: Any,
) -> None:
    register_model("smollm2", kind="base", path=str(base_checkpoint), is_default=True)
    load_demo()
    table = pick(table_choices(), CONVERSATIONS)[0].name  # what the Train page preselects
    cfg = GrpoConfig(model="smollm2", table={"name": table}, out="default-grpo", max_steps=1)
    assert [r.rule for r in cfg.rewards] == ["length:72"]
    run_grpo(cfg, recorder)
    first = next(values for _, values in recorder.metrics if "reward" in values)
    assert first["frac_reward_zero_std"] < 1.0, (table, first)
    assert first["reward_std"] > 0.0, (table, first)
