"""A base checkpoint whose generation_config.json sets top_k and top_p without
do_sample (transformers warns on load, refuses on save) no longer fails a run when it
saves its checkpoint: the trained checkpoint keeps its base's sampling settings."""

from __future__ import annotations

import json
from pathlib import Path

from train_fixtures import RecordingReporter

from trainers.checkpoints import CheckpointWriter

SAMPLING = {"top_k": 20, "top_p": 0.8, "repetition_penalty": 1.1}


def test_a_generation_config_transformers_refuses_to_save_is_kept(
    tiny_checkpoint: Path, tiny_base: str
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint))
    model.generation_config = GenerationConfig(**SAMPLING)  # no do_sample
    writer = CheckpointWriter(
        out="tiny-sampling-trained",
        base_name=tiny_base,
        tokenizer=AutoTokenizer.from_pretrained(str(tiny_checkpoint)),
        lineage={},
        reporter=RecordingReporter(),
    )
    info = writer.save(model, 1, final=True)

    saved = json.loads((Path(info.path) / "generation_config.json").read_text())
    assert {k: saved[k] for k in SAMPLING} == SAMPLING and "do_sample" not in saved
    assert model.generation_config.top_k == 20  # the model in training is untouched
    reloaded = AutoModelForCausalLM.from_pretrained(info.path)
    assert reloaded.generation_config.top_p == 0.8
