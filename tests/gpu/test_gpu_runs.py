"""Podium's GPU path end to end on the tiny model (`make test-gpu`): SFT full and LoRA
with the `gpu` preset, GRPO with sandbox rewards, GRPO with vLLM colocated in the
trainer, a vLLM generation job and a compare of the trained checkpoints. Skipped with
the reason on a machine without CUDA (see conftest.py). Not yet run on a GPU; their
bodies run on CPU as a rehearsal (conftest.py), and the colocated path runs on CPU in
tests/trainers/test_colocated_vllm.py."""

from __future__ import annotations

import pytest

from podium.models.registry import get_model
from podium.reporting import Reporter
from podium.store.read.refs import TableRef
from trainers.config import GrpoConfig, RewardSpec, SftConfig
from trainers.generation import vllm_importable

pytestmark = [pytest.mark.gpu, pytest.mark.train]

SMALL = dict(max_steps=4, batch_size=4, grad_accum=1, save_every=0, logging_steps=1)


def _grpo(tiny_base: str, table: str, out: str, device: str, **fields: object) -> GrpoConfig:
    """The gpu preset cut to two steps of two prompt groups."""
    small = dict(max_steps=2, batch_size=8, grad_accum=1, num_generations=4, save_every=0)
    return GrpoConfig.model_validate(
        {
            "model": tiny_base,
            "table": {"name": table},
            "out": out,
            "preset": "gpu",
            "device": device,
            "max_completion_length": 16,
            "eval_fraction": 0.0,
            **small,
            **fields,
        }
    )


def _peak_gib() -> float:
    import torch

    return float(torch.cuda.max_memory_allocated()) / 2**30


def _sft(
    tiny_base: str, table: str, out: str, method: str, recorder: Reporter, device: str
) -> None:
    import torch

    from trainers.sft import run_sft

    on_gpu = device == "cuda"
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    cfg = SftConfig(
        model=tiny_base,
        table={"name": table},
        out=out,
        preset="gpu",
        method=method,
        device=device,
        **SMALL,
    )
    outputs = run_sft(cfg, recorder)
    assert outputs.summary["steps"] == 4
    if on_gpu:
        assert _peak_gib() > 0  # the run used the GPU, not the CPU
        assert not torch.backends.cuda.cudnn_sdp_enabled()  # measured slower: off by default
    assert get_model(out).lineage["preset"] == "gpu"


def test_sft_full_and_lora_with_the_gpu_preset(
    tiny_base, make_table, memo_pairs, recorder, gpu_device
):
    make_table("g.memo", memo_pairs * 4)
    _sft(tiny_base, "g.memo", "gpu-sft-full", "full", recorder, gpu_device)
    _sft(tiny_base, "g.memo", "gpu-sft-lora", "lora", recorder, gpu_device)
    losses = [v["loss"] for _, v in recorder.metrics if "loss" in v]
    assert losses and all(loss == loss for loss in losses)  # no NaN from bf16


@pytest.mark.sandbox
def test_grpo_with_sandbox_rewards_on_gpu(tiny_base, make_table, recorder, gpu_device):
    logs: list[str] = []
    recorder.log = logs.append  # type: ignore[method-assign]
    make_table(
        "g.code",
        [("Print the sum of 2 and 3.", "```python\nprint(2 + 3)\n```")] * 8,
    )
    rewards = [RewardSpec(rule="sandbox:output"), RewardSpec(rule="validate:json", weight=0.5)]
    cfg = _grpo(
        tiny_base,
        "g.code",
        "gpu-grpo-sandbox",
        gpu_device,
        method="lora",
        use_vllm=False,
        rewards=rewards,
    )
    from trainers.grpo import run_grpo

    outputs = run_grpo(cfg, recorder)
    steps = [v for _, v in recorder.metrics if "rewards/sandbox_output/mean" in v]
    assert len(steps) == 2 and outputs.summary["steps"] == 2
    assert not any("use_vllm" in line for line in logs)  # nothing asked, nothing said
    assert get_model("gpu-grpo-sandbox").lineage["kind"] == "grpo"


@pytest.mark.skipif(not vllm_importable(), reason="CUDA vLLM is not importable")
def test_grpo_colocated_with_vllm(tiny_base, make_table, memo_pairs, recorder, gpu_device):
    logs: list[str] = []
    recorder.log = logs.append  # type: ignore[method-assign]
    make_table("g.memo", memo_pairs * 4)
    rewards = [RewardSpec(rule="exact_match"), RewardSpec(rule="length:40", weight=0.2)]
    cfg = _grpo(
        tiny_base,
        "g.memo",
        "gpu-grpo-vllm",
        gpu_device,
        rewards=rewards,
        vllm_gpu_memory_utilization=0.2,
    )
    from trainers.grpo import run_grpo

    outputs = run_grpo(cfg, recorder)
    assert any("colocated" in line for line in logs), logs
    assert [v for _, v in recorder.metrics if "reward" in v]
    assert outputs.summary["steps"] == 2 and get_model("gpu-grpo-vllm").path


def test_generation_job_and_compare_of_trained_checkpoints(
    tiny_base, make_table, memo_pairs, recorder, vllm_server_env, gpu_device, stop_servers
):
    """A generation job on the GPU-served checkpoint, then compare base vs fine-tuned."""
    from generators.generate import GenerateConfig, run_generate
    from podium.compare.job import CompareConfig, run_compare
    from podium.store.catalog.catalog import load_table

    make_table("g.cmp", memo_pairs * 4)
    _sft(tiny_base, "g.cmp", "gpu-cmp-sft", "full", recorder, gpu_device)
    gen = run_generate(
        GenerateConfig(
            input=TableRef(name="g.cmp"), out="g.gen", model="gpu-cmp-sft", max_tokens=16
        ),
        Reporter(),
    )
    assert load_table("g.gen").scan().to_arrow().num_rows == 16, gen.summary
    run_compare(
        CompareConfig(
            models=[tiny_base, "gpu-cmp-sft"],
            input=TableRef(name="g.cmp"),
            out="g.compare",
            max_tokens=16,
            limit=4,
            checks=["json"],
        ),
        Reporter(),
    )
    assert load_table("g.compare").scan().to_arrow().num_rows > 0
