"""LoRA SFT merges its adapters into a full checkpoint that loads without peft."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from podium.models.registry import get_model
from trainers.config import SftConfig
from trainers.sft import run_sft

pytestmark = pytest.mark.train


def test_lora_merge_gives_loadable_full_checkpoint(
    tiny_base, tiny_checkpoint, make_table, memo_pairs, recorder
):
    make_table(
        "t.memo", memo_pairs + [("Give the colour of a lemon as JSON.", '{"colour": "yellow"}')]
    )
    cfg = SftConfig(
        model=tiny_base,
        table={"name": "t.memo"},
        out="memo-lora",
        method="lora",
        max_steps=6,
        batch_size=4,
        learning_rate=1e-2,
        lora_r=4,
        lora_alpha=8,
        eval_fraction=0.25,
        save_every=3,
    )
    run_sft(cfg, recorder)
    # One of the five rows is held out and evaluated at each save.
    assert [s for s, v in recorder.metrics if "eval_loss" in v] == [3, 6]
    assert get_model("memo-lora-step-3").lineage["method"] == "lora"
    info = get_model("memo-lora")
    path = Path(info.path)
    assert not (path / "adapter_config.json").exists()
    assert "lora" not in json.dumps(json.loads((path / "config.json").read_text())).lower()
    merged = AutoModelForCausalLM.from_pretrained(path)
    base = AutoModelForCausalLM.from_pretrained(tiny_checkpoint)
    assert not any("lora" in n for n, _ in merged.named_parameters())
    changed = [
        n
        for (n, p), (_, q) in zip(merged.named_parameters(), base.named_parameters(), strict=True)
        if not torch.equal(p, q)
    ]
    assert any("q_proj" in n for n in changed)  # the adapters' updates are in the weights
    # The saved tokenizer keeps the checkpoint's own chat template (no training markers).
    tok = AutoTokenizer.from_pretrained(path)
    assert "{% generation %}" not in tok.chat_template
    ids = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    out = merged.generate(**ids, max_new_tokens=3, do_sample=False)
    assert out.shape[1] == ids["input_ids"].shape[1] + 3
