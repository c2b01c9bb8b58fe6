"""One-click presets: each fills the defaults of a run card, and every field stays editable.

- `cpu-smoke`: a few steps on tiny batches; seconds on a tiny model, a minute or two on
  SmolLM2-135M. Tests and demos use it.
- `cpu-small`: a real but small run on 2 CPU cores (30 LoRA steps, evaluated every 10):
  7-10 s a step on idle cores, about 5 minutes; 20-40 s a step, 10-20 minutes, while vLLM
  or other jobs share the cores (measured: 17 of 30 steps after 11 minutes beside a vLLM
  server and the app).
- `gpu`: a real run on one GPU (full fine-tune, bf16, vLLM colocated for GRPO where vLLM
  is importable in the trainer; TRL's own generation, with a notice, where it is not).
"""

from __future__ import annotations

from typing import Any, Literal

from podium.errors import InvalidInput

PRESET_NAMES = ("cpu-smoke", "cpu-small", "gpu")
DEFAULT_PRESET: Literal["cpu-smoke"] = "cpu-smoke"  # what a card naming no preset gets

# What a person choosing a preset needs to know first: how long it takes (CLI, Train page).
PRESET_SUMMARIES = {
    "cpu-smoke": "seconds on a tiny model, about a minute on SmolLM2-135M: a smoke test",
    "cpu-small": (
        "30 LoRA steps on 2 CPU cores: 7-10 s a step when the cores are free (about 5 min "
        "with its 3 evaluations), 20-40 s a step (10-20 min) beside vLLM or other jobs"
    ),
    "gpu": "a real run on one GPU (full fine-tune, bf16)",
}

_COMMON: dict[str, dict[str, Any]] = {
    "cpu-smoke": {
        "method": "full",
        "max_steps": 4,
        "batch_size": 2,
        "grad_accum": 1,
        "learning_rate": 5e-4,
        "max_length": 256,
        "save_every": 0,
        "logging_steps": 1,
        "eval_fraction": 0.0,
        "max_rows": 64,
        "device": "cpu",
    },
    "cpu-small": {
        "method": "lora",
        "max_steps": 30,
        "batch_size": 4,
        "grad_accum": 1,
        "learning_rate": 2e-4,
        "max_length": 256,
        "save_every": 10,
        "logging_steps": 1,
        "eval_fraction": 0.05,
        "max_rows": 400,
        "device": "cpu",
    },
    "gpu": {
        "method": "full",
        "max_steps": 500,
        "batch_size": 16,
        "grad_accum": 2,
        "learning_rate": 2e-5,
        "max_length": 2048,
        "save_every": 100,
        "logging_steps": 5,
        "eval_fraction": 0.02,
        "max_rows": None,
        "device": "cuda",
    },
}


def length_reward(max_completion_length: int) -> list[dict[str, Any]]:
    """The default reward of a GRPO card that names none, for its completion budget:
    a length penalty from about 3 characters a token of the budget (0 below, -1 at twice
    that). Completions of one prompt differ in length, so within a group the rewards
    differ from the first step: the run has a learning signal. (exact_match, the old
    default, never fired: a 24-token completion cannot equal a 40-token reference
    answer; a fixed length:64 gives every long completion the capped -1.)"""
    return [{"rule": f"length:{3 * max_completion_length}", "weight": 1.0}]


_GRPO: dict[str, dict[str, Any]] = {
    "cpu-smoke": {
        "max_steps": 2,
        "batch_size": 4,
        "num_generations": 4,
        "max_completion_length": 24,
        "learning_rate": 1e-5,
        "max_rows": 16,
    },
    "cpu-small": {
        "method": "lora",
        "max_steps": 20,
        "batch_size": 8,
        "num_generations": 8,
        "max_completion_length": 64,
        "learning_rate": 5e-6,
        "max_rows": 200,
        # A GRPO evaluation samples num_generations completions per held-out prompt:
        # minutes on 2 cores, so the CPU preset holds nothing out.
        "eval_fraction": 0.0,
    },
    "gpu": {
        "method": "full",
        "max_steps": 300,
        "batch_size": 32,
        "num_generations": 8,
        "max_completion_length": 512,
        "learning_rate": 1e-6,
        "use_vllm": True,
    },
}


def preset_defaults(kind: str, preset: str) -> dict[str, Any]:
    """The field values `preset` gives a card of `kind` ("sft" or "grpo")."""
    if preset not in _COMMON:
        raise InvalidInput(f"Unknown preset {preset!r}; use one of {', '.join(PRESET_NAMES)}.")
    values = dict(_COMMON[preset])
    if kind == "grpo":
        values.update(_GRPO[preset])
    return values
