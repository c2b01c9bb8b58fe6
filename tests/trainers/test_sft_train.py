"""SFT on a real Iceberg table with the tiny model: loss falls, checkpoints come back."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.models.registry import get_model
from trainers.config import SftConfig
from trainers.sft import run_sft

pytestmark = pytest.mark.train


def test_full_sft_loss_falls_and_checkpoint_is_registered(
    tiny_base, make_table, memo_pairs, recorder
):
    make_table("t.memo", memo_pairs)
    cfg = SftConfig(
        model=tiny_base,
        table={"name": "t.memo"},
        out="memo-sft",
        preset="cpu-smoke",
        max_steps=30,
        batch_size=4,
        learning_rate=3e-3,
        save_every=10,
    )
    rep = recorder
    outputs = run_sft(cfg, rep)

    losses = [v["loss"] for _, v in rep.metrics if "loss" in v]
    assert len(losses) >= 20
    assert sum(losses[-5:]) / 5 < 0.5 * sum(losses[:5]) / 5
    assert any("tokens_per_s" in v and v["tokens_per_s"] > 0 for _, v in rep.metrics)
    assert any("learning_rate" in v and "grad_norm" in v for _, v in rep.metrics)

    final = get_model("memo-sft")
    assert final.kind == "trained" and final.parent == tiny_base
    assert final.job_id == "job-test" and final.step == 30
    assert final.lineage["table"] == "t.memo" and final.lineage["snapshot_id"] is not None
    assert final.lineage["base_model"] == tiny_base and final.lineage["final"] is True
    assert (Path(final.path) / "model.safetensors").is_file()
    # Periodic checkpoints were registered as such on the way.
    assert [get_model(f"memo-sft-step-{s}").step for s in (10, 20)] == [10, 20]
    assert outputs.checkpoints == ["memo-sft-step-10", "memo-sft-step-20", "memo-sft"]
    assert not any(p.name.startswith(".") for p in Path(final.path).parent.iterdir())
