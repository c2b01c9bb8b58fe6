"""The async learner's step on CUDA (`make test-gpu`): its inputs are built on the CPU
from lists, and the step must move them to the model's device (it crashed on the first
GPU step when it did not). Skipped with the reason without a CUDA device."""

from __future__ import annotations

from pathlib import Path

import pytest
from learner_steps import COMPLETIONS, on_policy

from trainers.async_rl.learner import Learner, LearnerSettings

pytestmark = pytest.mark.gpu


def test_one_learner_step_on_cuda(tiny_checkpoint: Path, gpu_device: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.bfloat16)
    learner = Learner(model.to(gpu_device), LearnerSettings(learning_rate=1e-3, temperature=0.7))
    assert learner.device.type == gpu_device
    stats = learner.step(on_policy(learner, [1.0, -1.0, 0.5, -0.5]))
    assert stats.tokens == sum(map(len, COMPLETIONS))
    assert stats.is_weight_mean == pytest.approx(1.0, abs=1e-2)  # bf16 forward twice
    assert all(p.device.type == gpu_device for p in model.parameters())
