"""GRPO's GPU settings decided on CPU: where generation runs (colocated vLLM, a vLLM
server, or TRL's own generate with a notice), cuDNN attention, the LoRA base dtype, and
a card's max_length and eval_fraction honoured."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from podium.errors import InvalidInput
from podium.reporting import Reporter
from trainers.config import GrpoConfig
from trainers.generation import plan_generation
from trainers.runtime import base_dtype, configure_attention


def card(**fields: object) -> GrpoConfig:
    return GrpoConfig.model_validate({"model": "m", "table": {"name": "t.x"}, "out": "o", **fields})


def test_gpu_preset_colocates_vllm_where_cuda_and_vllm_are_there():
    plan = plan_generation(card(preset="gpu"), "cuda", has_vllm=True)
    assert plan.args == {
        "use_vllm": True,
        "vllm_mode": "colocate",
        "vllm_gpu_memory_utilization": 0.3,
        "vllm_max_model_length": 2048,  # the card's max_length is vLLM's context
    }
    assert plan.notice and "colocated" in plan.notice


def test_without_vllm_generation_falls_back_with_a_notice():
    no_vllm = plan_generation(card(preset="gpu"), "cuda", has_vllm=False)
    assert no_vllm.args == {}
    assert no_vllm.notice and "vLLM is not importable" in no_vllm.notice
    cpu_no_vllm = plan_generation(card(use_vllm=True, device="cpu"), "cpu", has_vllm=False)
    assert cpu_no_vllm.args == {} and ".venv-vllm" in (cpu_no_vllm.notice or "")
    # vLLM's CPU build colocates too (weights synced by its in-place reload).
    on_cpu = plan_generation(card(use_vllm=True, device="cpu"), "cpu", has_vllm=True)
    assert on_cpu.args["vllm_mode"] == "colocate"
    assert on_cpu.notice and "on the CPU" in on_cpu.notice
    # Nothing asked, nothing said.
    assert plan_generation(card(), "cuda", has_vllm=True).notice is None


def test_server_mode_names_its_server():
    url = "http://127.0.0.1:8000"
    plan = plan_generation(
        card(preset="gpu", vllm_mode="server", vllm_server_url=url), "cuda", has_vllm=True
    )
    assert plan.args["vllm_mode"] == "server" and plan.args["vllm_server_base_url"] == url
    assert "vllm_gpu_memory_utilization" not in plan.args
    with pytest.raises(ValidationError, match="vllm_server_url"):
        card(preset="gpu", vllm_mode="server")


def test_max_length_must_leave_room_for_a_prompt():
    with pytest.raises(ValidationError, match=r"max_length \(64\) must exceed max_completion"):
        card(max_length=64, max_completion_length=64)


def test_lora_base_is_bf16_only_on_a_bf16_gpu():
    assert base_dtype(frozen_base=True, device="cuda", bf16_supported=True) == "bfloat16"
    assert base_dtype(frozen_base=False, device="cuda", bf16_supported=True) == "float32"
    assert base_dtype(frozen_base=True, device="cuda", bf16_supported=False) == "float32"
    assert base_dtype(frozen_base=True, device="cpu", bf16_supported=True) == "float32"


def test_cudnn_attention_is_off_on_cuda_unless_asked(monkeypatch):
    import torch

    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        assert configure_attention("cpu") is False
        assert torch.backends.cuda.cudnn_sdp_enabled()  # CPU runs leave the flag alone
        assert configure_attention("cuda") is False
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        monkeypatch.setenv("PODIUM_CUDNN_SDPA", "1")
        assert configure_attention("cuda") is True
        assert torch.backends.cuda.cudnn_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)


def test_prompts_beyond_max_length_are_left_out(tiny_base, make_table, memo_pairs):
    from podium.models.registry import get_model
    from podium.store.read.refs import TableRef
    from trainers.data import fit_prompts, grpo_dataset, load_training_data
    from trainers.runtime import load_tokenizer

    long_question = "Describe the colour of the sea " + "in great detail " * 60
    make_table("t.long", [*memo_pairs, (long_question, "blue")])
    data = load_training_data(TableRef(name="t.long"))
    tokenizer = load_tokenizer(get_model(tiny_base).path)
    kept, dropped = fit_prompts(grpo_dataset(data.train), tokenizer, budget=128)
    assert (len(kept), dropped) == (4, 1)
    assert all("great detail" not in row["prompt"][-1]["content"] for row in kept)
    with pytest.raises(InvalidInput, match="No prompt fits max_length minus"):
        fit_prompts(grpo_dataset(data.train), tokenizer, budget=8)


@pytest.mark.train
def test_use_vllm_on_cpu_trains_with_a_notice_and_evaluates_the_held_out_share(
    tiny_base, make_table, memo_pairs, recorder
):
    """use_vllm without vLLM in the trainer trains anyway (TRL's generate) and says so;
    eval_fraction holds prompts out and TRL scores them (it was ignored before)."""
    logs: list[str] = []
    recorder.log = logs.append  # type: ignore[method-assign]
    make_table("t.memo8", memo_pairs * 2)
    cfg = card(
        model=tiny_base,
        table={"name": "t.memo8"},
        out="memo-grpo-eval",
        device="cpu",
        use_vllm=True,
        eval_fraction=0.25,
        max_eval_rows=2,
        save_every=2,
        max_steps=2,
        batch_size=4,
        num_generations=4,
        max_completion_length=8,
    )
    from trainers.grpo import run_grpo

    outputs = run_grpo(cfg, recorder)
    assert any("not importable" in line and "TRL's own" in line for line in logs), logs
    assert any("6 prompts / 2 eval" in line for line in logs), logs
    evals = [v for _, v in recorder.metrics if "eval_reward" in v]
    assert evals, recorder.metrics
    assert outputs.summary["steps"] == 2 and outputs.summary["prompts"] == 6


def test_gpu_settings_on_a_cpu_machine_keep_failing_before_compute(
    tiny_base, make_table, memo_pairs
):
    """The gpu preset asks for device: cuda; with no GPU that is still refused first."""
    import torch

    from trainers.grpo import run_grpo

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    make_table("t.memo", memo_pairs)
    with pytest.raises(InvalidInput, match="no GPU is visible"):
        run_grpo(card(model=tiny_base, table={"name": "t.memo"}, preset="gpu"), Reporter())
