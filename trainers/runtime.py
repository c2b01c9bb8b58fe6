"""What every training run needs before and around TRL: environment, device, model,
and the TrainingArguments fields that make TRL behave on CPU.

`OMP_WAIT_POLICY=PASSIVE` must be in the environment before torch loads its OpenMP
runtime (4x faster on a busy 2-core machine, see FACTS.md), and nowhere else: it slows
plain decoding, so a vLLM server must not inherit it. `run_sft` and `run_grpo` call
`prepare_env()` first, before anything imports torch, in the training process only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.errors import InvalidInput, NotFound
from podium.models.registry import ModelInfo, get_model, get_model_or_none
from trainers.config import TrainConfig

TRAIN_ENV = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def prepare_env() -> None:
    """Training-only settings, in this (the training) process; values already set win."""
    for key, value in TRAIN_ENV.items():
        os.environ.setdefault(key, value)


@dataclass(frozen=True)
class BaseModelRef:
    name: str  # the registered name (the `base` alias resolved)
    path: Path


def resolve_base(name: str) -> BaseModelRef:
    """The checkpoint directory of a registered base model or trained checkpoint."""
    info: ModelInfo = get_model(name)
    if info.kind == "endpoint" or not info.path:
        raise InvalidInput(
            f"Model {name!r} is an external endpoint; training needs a local checkpoint "
            "(a base model or a trained checkpoint)."
        )
    path = Path(info.path)
    if not (path / "config.json").is_file():
        raise NotFound(f"Model {info.name!r} is registered at {path}, but no checkpoint is there.")
    return BaseModelRef(info.name, path)


def check_out_name(out: str) -> None:
    from podium.models.registry import check_name

    check_name(out)
    if get_model_or_none(out) is not None:
        raise InvalidInput(
            f"A model named {out!r} is already registered; choose another --out name."
        )


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise InvalidInput(
            "This card asks for device: cuda but no GPU is visible; use the cpu-small "
            "preset or set device: cpu."
        )
    return device


def trainer_args(cfg: TrainConfig, device: str, output_dir: Path, has_eval: bool) -> dict[str, Any]:
    """TrainingArguments fields shared by SFTConfig and GRPOConfig."""
    import torch

    on_gpu = device == "cuda"
    bf16 = on_gpu and torch.cuda.is_bf16_supported()
    return dict(
        output_dir=str(output_dir),
        use_cpu=not on_gpu,
        bf16=bf16,
        fp16=False,
        gradient_checkpointing=False,
        seed=cfg.seed,
        data_seed=cfg.seed,
        # On a CPU every op has a deterministic kernel: the same card gives the same
        # weights and curves (`podium jobs rerun ID --compare`). On a GPU some kernels
        # have none (strict mode would refuse them), so the card promises a tolerance.
        full_determinism=not on_gpu,
        max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size,
        per_device_eval_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum,
        learning_rate=cfg.learning_rate,
        lr_scheduler_type=cfg.lr_scheduler,
        warmup_steps=cfg.warmup_steps,
        logging_steps=cfg.logging_steps,
        logging_first_step=True,
        # Podium saves its own checkpoints (full HF dirs, LoRA merged, registered).
        save_strategy="no",
        eval_strategy="steps" if has_eval else "no",
        eval_steps=max(cfg.save_every or cfg.max_steps // 2, 1) if has_eval else None,
        report_to=[],
        disable_tqdm=True,
        dataloader_num_workers=0,
    )


def peft_config(cfg: TrainConfig, task_type: str = "CAUSAL_LM") -> Any:
    if cfg.method != "lora":
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=cfg.lora_target_modules,
        task_type=task_type,
    )


def load_tokenizer(path: Path) -> Any:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def base_dtype(frozen_base: bool, device: str, bf16_supported: bool) -> str:
    """float32, except a LoRA run's frozen base on a bf16 GPU: no optimizer keeps master
    weights for it, so bf16 halves its memory and its matmuls (the adapters stay float32,
    as peft casts them)."""
    return "bfloat16" if frozen_base and device == "cuda" and bf16_supported else "float32"


def load_model(path: Path, device: str, frozen_base: bool = False) -> Any:
    """Full fine-tunes load float32: on a GPU the Trainer's bf16 autocast does the mixed
    precision and the optimizer keeps float32 master weights."""
    import torch
    from transformers import AutoModelForCausalLM

    bf16_ok = device == "cuda" and torch.cuda.is_bf16_supported()
    dtype = getattr(torch, base_dtype(frozen_base, device, bf16_ok))
    return AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype)


CUDNN_SDPA_ENV = "PODIUM_CUDNN_SDPA"


def configure_attention(device: str) -> bool:
    """On CUDA, turn off cuDNN's scaled-dot-product attention unless PODIUM_CUDNN_SDPA=1:
    it builds a new plan for every new sequence length, and a training run sees many
    (lent H100: SFT tiny 21.1 -> 5.1 s, SmolLM2-135M 0.375 -> 0.276 s/step, GRPO 25.6 ->
    16.8 s/step with it off). PyTorch then uses its flash / memory-efficient kernels.
    Returns whether cuDNN SDPA stays on."""
    if device != "cuda":
        return False
    import torch

    keep = os.environ.get(CUDNN_SDPA_ENV, "0") == "1"
    torch.backends.cuda.enable_cudnn_sdp(keep)
    return keep
