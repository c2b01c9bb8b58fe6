"""Bootstrapping the shipped SmolLM2 GGUF into a registered float32 checkpoint."""

from __future__ import annotations

import json
import stat

from podium.models import default_base, get_model
from podium.models.bootstrap import BASE_NAME, bootstrap, is_checkpoint


def test_converted_checkpoint_is_plain_float32_and_world_readable(base_checkpoint):
    config = json.loads((base_checkpoint / "config.json").read_text())
    assert "quantization_config" not in config
    assert config["dtype"] == "float32"
    assert config["architectures"] == ["LlamaForCausalLM"]
    weights = base_checkpoint / "model.safetensors"
    assert weights.stat().st_size > 500_000_000  # 135M float32 parameters
    assert stat.S_IMODE(weights.stat().st_mode) == 0o644
    assert "im_start" in (base_checkpoint / "chat_template.jinja").read_text()


def test_bootstrap_registers_default_base_and_is_idempotent(podium_home, base_checkpoint):
    info = bootstrap()
    assert info.name == BASE_NAME and info.kind == "base" and info.is_default
    assert is_checkpoint(podium_home / "models" / BASE_NAME)
    assert default_base() == info == get_model("base")
    mtime = (base_checkpoint / "model.safetensors").stat().st_mtime_ns
    again = bootstrap()
    assert again == info  # same row, nothing re-registered
    assert (base_checkpoint / "model.safetensors").stat().st_mtime_ns == mtime  # not reconverted
