"""`podium train`: cards, a foreground run that registers, and errors before compute."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from podium.cli import app
from podium.errors import InvalidInput
from podium.models.registry import get_model

pytestmark = pytest.mark.train
runner = CliRunner()


def _front_matter(text: str) -> dict:
    return yaml.safe_load(text.split("---")[1])


def test_card_is_written_with_preset_values_and_overrides(
    tiny_base, make_table, memo_pairs, tmp_path
):
    make_table("t.memo", memo_pairs)
    card = tmp_path / "run.md"
    result = runner.invoke(
        app,
        [
            "train",
            "grpo",
            "--model",
            tiny_base,
            "--table",
            "t.memo",
            "--out",
            "g1",
            "--preset",
            "cpu-small",
            "--reward",
            "exact_match",
            "--reward",
            "length:50*0.25",
            "--set",
            "lora_r=4",
            "--card",
            str(card),
        ],
    )
    assert result.exit_code == 0, result.output
    front = _front_matter(card.read_text())
    assert front["kind"] == "grpo" and front["method"] == "lora" and front["lora_r"] == 4
    assert front["max_steps"] == 20  # from cpu-small
    assert front["table"]["snapshot_id"] is not None  # pinned
    assert front["rewards"] == [
        {"rule": "exact_match", "weight": 1.0},
        {"rule": "length:50", "weight": 0.25},
    ]


def test_unknown_reward_fails_before_anything_is_written(
    tiny_base, make_table, memo_pairs, tmp_path
):
    make_table("t.memo", memo_pairs)
    result = runner.invoke(
        app,
        [
            "train",
            "grpo",
            "--model",
            tiny_base,
            "--table",
            "t.memo",
            "--out",
            "g1",
            "--reward",
            "sandbox:vibes",
            "--card",
            str(tmp_path / "run.md"),
        ],
    )
    assert isinstance(result.exception, InvalidInput)
    assert "Unknown reward rule 'sandbox:vibes'" in str(result.exception)
    assert not (tmp_path / "run.md").exists()


def test_foreground_sft_registers_the_checkpoint(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    result = runner.invoke(
        app,
        [
            "train",
            "sft",
            "--model",
            tiny_base,
            "--table",
            "t.memo",
            "--out",
            "cli-sft",
            "--preset",
            "cpu-smoke",
            "--steps",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    info = get_model("cli-sft")
    assert info.step == 3 and info.job_id and info.lineage["job_id"] == info.job_id
    assert "kind: sft" in info.lineage["card"]


def test_presets_say_how_long_they_take() -> None:
    """Before: `cpu-small` promised "a few minutes"; a step took 20-40 s beside vLLM."""
    shown = runner.invoke(app, ["train", "presets"])
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.output.splitlines() if x.startswith("cpu-small:"))
    assert "20-40 s a step" in line and "10-20 min" in line and "few minutes" not in line
