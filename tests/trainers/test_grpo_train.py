"""GRPO with the tiny model on a real table: steps run, reward metrics and samples flow."""

from __future__ import annotations

import pytest

from podium.models.registry import get_model
from trainers.config import GrpoConfig, RewardSpec
from trainers.grpo import run_grpo

pytestmark = pytest.mark.train


def test_grpo_logs_per_reward_metrics_and_registers(tiny_base, make_table, memo_pairs, recorder):
    make_table("t.memo", memo_pairs)
    cfg = GrpoConfig(
        model=tiny_base, table={"name": "t.memo"}, out="memo-grpo", preset="cpu-smoke",
        rewards=[RewardSpec(rule="exact_match"), RewardSpec(rule="length:8", weight=0.5)],
        max_steps=2, batch_size=4, num_generations=4, max_completion_length=12,
    )
    outputs = run_grpo(cfg, recorder)

    logged = {k for _, values in recorder.metrics for k in values}
    assert {"reward", "reward_std", "rewards/exact_match/mean", "rewards/length_8/mean"} <= logged
    assert "completions/mean_length" in logged
    # Random weights never hit the reference, and 12 tokens exceed 8 characters.
    assert all(v["rewards/length_8/mean"] < 0 for _, v in recorder.metrics if "rewards/length_8/mean" in v)
    assert recorder.samples and {"prompt", "completion", "reward/exact_match"} <= set(recorder.samples[0][1])
    final = get_model("memo-grpo")
    assert final.lineage["kind"] == "grpo" and final.lineage["rewards"][1]["weight"] == 0.5
    assert outputs.summary["steps"] == 2
