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
        model=tiny_base,
        table={"name": "t.memo"},
        out="memo-grpo",
        preset="cpu-smoke",
        rewards=[RewardSpec(rule="exact_match"), RewardSpec(rule="length:8", weight=0.5)],
        max_steps=2,
        batch_size=4,
        num_generations=4,
        max_completion_length=12,
    )
    outputs = run_grpo(cfg, recorder)

    logged = {k for _, values in recorder.metrics for k in values}
    assert {"reward", "reward_std", "rewards/exact_match/mean", "rewards/length_8/mean"} <= logged
    assert {"completions/mean_length", "tokens_per_s", "learning_rate"} <= logged
    # Random weights never hit the reference, and 12 tokens exceed 8 characters.
    assert all(
        v["rewards/length_8/mean"] < 0 for _, v in recorder.metrics if "rewards/length_8/mean" in v
    )
    assert recorder.samples and {"prompt", "completion", "reward/exact_match"} <= set(
        recorder.samples[0][1]
    )
    final = get_model("memo-grpo")
    assert final.lineage["kind"] == "grpo" and final.lineage["rewards"][1]["weight"] == 0.5
    assert outputs.summary["steps"] == 2


@pytest.mark.sandbox
def test_grpo_with_validator_and_sandbox_rewards(tiny_base, make_table, recorder):
    make_table(
        "t.code",
        [
            ("Print the sum of 2 and 3 as JSON or code.", "```python\nprint(2 + 3)\n```"),
            ("Print hello.", "```python\nprint('hello')\n```"),
        ],
    )
    cfg = GrpoConfig(
        model=tiny_base,
        table={"name": "t.code"},
        out="code-grpo",
        preset="cpu-smoke",
        rewards=[RewardSpec(rule="validate:json", weight=0.5), RewardSpec(rule="sandbox:output")],
        max_steps=2,
        batch_size=4,
        num_generations=4,
        max_completion_length=8,
    )
    run_grpo(cfg, recorder)
    steps = [v for _, v in recorder.metrics if "rewards/sandbox_output/mean" in v]
    assert len(steps) == 2
    assert all("rewards/validate_json/mean" in v and "reward_std" in v for v in steps)
    # Both rewards scored every sampled completion (random weights: 0 each, but scored).
    assert {"reward/validate_json", "reward/sandbox_output"} <= set(recorder.samples[-1][1])
    assert get_model("code-grpo").lineage["rewards"][1]["rule"] == "sandbox:output"


def test_grpo_with_lora_saves_a_merged_checkpoint(tiny_base, make_table, memo_pairs, recorder):
    from pathlib import Path

    make_table("t.memo", memo_pairs)
    cfg = GrpoConfig(
        model=tiny_base,
        table={"name": "t.memo"},
        out="memo-grpo-lora",
        preset="cpu-small",
        rewards=[RewardSpec(rule="length:4")],
        max_steps=1,
        batch_size=4,
        num_generations=4,
        max_completion_length=8,
        lora_r=4,
        save_every=0,
    )
    assert cfg.method == "lora"
    run_grpo(cfg, recorder)
    path = Path(get_model("memo-grpo-lora").path)
    assert (path / "model.safetensors").is_file() and not (path / "adapter_config.json").exists()
