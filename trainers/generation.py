"""How a GRPO run samples its completions: vLLM inside the trainer (TRL's colocate mode),
a separate `trl vllm-serve` (server mode, a second GPU), or TRL's own `model.generate`.

`use_vllm: true` is a wish, not a requirement: where `vllm` is not importable in the
training process the run still trains, generating with transformers, and says so in its
job log. Where it is (the CUDA lock; on CPU a venv holding both, as the colocated test
builds) colocate mode runs, on a GPU or on the CPU build of vLLM. See `trainers/grpo.py`
for how new weights reach vLLM after each step.

Server mode, for a host with a second GPU (one GPU cannot hold two NCCL ranks):

    CUDA_VISIBLE_DEVICES=1 trl vllm-serve --model CHECKPOINT_DIR --port 8000   # GPU 1
    podium train grpo ... --preset gpu --set vllm_mode=server \
        --set vllm_server_url=http://127.0.0.1:8000                           # GPU 0
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from trainers.config import GrpoConfig


@dataclass(frozen=True)
class GenerationPlan:
    """TRL GRPOConfig fields for generation, and the line the job log gets (if any)."""

    args: dict[str, Any] = field(default_factory=dict)
    notice: str | None = None


def vllm_importable() -> bool:
    """`vllm` is installed where this (the training) process can import it."""
    return importlib.util.find_spec("vllm") is not None


def plan_generation(cfg: GrpoConfig, device: str, has_vllm: bool) -> GenerationPlan:
    """The generation path for `cfg` on `device` (cpu or cuda) given whether `vllm` imports."""
    if not cfg.use_vllm:
        return GenerationPlan()
    missing = (
        None
        if has_vllm
        else "vLLM is not importable in the training environment (install the CUDA lock: "
        "PODIUM_ACCEL=cuda make setup)"
        if device == "cuda"
        else "vLLM is not importable in the training environment (on CPU it lives in "
        ".venv-vllm; docs/gpus.md shows a training venv that has both)"
    )
    if missing:
        return GenerationPlan(
            notice=f"use_vllm: {missing}; generating with TRL's own transformers "
            "generate instead (slower; same training)."
        )
    common: dict[str, Any] = dict(use_vllm=True, vllm_max_model_length=cfg.max_length)
    if cfg.vllm_mode == "server":
        return GenerationPlan(
            args={**common, "vllm_mode": "server", "vllm_server_base_url": cfg.vllm_server_url},
            notice=f"use_vllm: generating on the vLLM server at {cfg.vllm_server_url} "
            "(weights sent over NCCL after each step).",
        )
    share = (
        f"{cfg.vllm_gpu_memory_utilization:.0%} of the GPU's memory"
        if device == "cuda"
        else "on the CPU, its KV cache sized by VLLM_CPU_KVCACHE_SPACE"
    )
    return GenerationPlan(
        args={
            **common,
            "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": cfg.vllm_gpu_memory_utilization,
        },
        notice=f"use_vllm: generating with vLLM colocated in this process ({share}; "
        "weights synced in memory after each step).",
    )
