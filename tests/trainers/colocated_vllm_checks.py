"""Checks that run INSIDE a venv holding both Podium and vLLM's CPU build (built by
test_colocated_vllm.py, which runs this file there with pytest): GRPO with vLLM colocated
in the trainer, as the `gpu` preset runs it on CUDA. Not collected by the suite itself
(the name does not start with test_), since the project venv has no vLLM."""

from __future__ import annotations

import pytest

from podium.models.registry import get_model
from trainers.config import GrpoConfig, RewardSpec
from trainers.generation import plan_generation

pytestmark = [pytest.mark.train]


def _card(tiny_base: str, table: str, out: str, **fields: object) -> GrpoConfig:
    return GrpoConfig.model_validate(
        {
            "model": tiny_base,
            "table": {"name": table},
            "out": out,
            "device": "cpu",
            "use_vllm": True,
            "max_steps": 2,
            "batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "max_length": 256,
            "eval_fraction": 0.0,
            "save_every": 0,
            "rewards": [RewardSpec(rule="exact_match"), RewardSpec(rule="length:40", weight=0.2)],
            **fields,
        }
    )


def test_grpo_job_generates_with_colocated_vllm(tiny_base, make_table, memo_pairs, recorder):
    from trainers.grpo import run_grpo

    logs: list[str] = []
    recorder.log = logs.append  # type: ignore[method-assign]
    make_table("c.memo", memo_pairs * 2)
    outputs = run_grpo(_card(tiny_base, "c.memo", "colo-grpo", method="lora"), recorder)
    assert any("colocated in this process (on the CPU" in line for line in logs), logs
    steps = [v for _, v in recorder.metrics if "reward" in v]
    assert len(steps) == 2, recorder.metrics
    assert outputs.summary["steps"] == 2
    assert get_model("colo-grpo").lineage["kind"] == "grpo"


def test_the_engine_holds_the_trained_weights_after_a_sync(
    tiny_base, make_table, memo_pairs, tmp_path
):
    """After a step, Podium's sync puts the policy's weights into the colocated engine
    (TRL 1.16's own sync failed on vLLM 0.32's CPU build: 'no attribute weight_loader'),
    and the engine's greedy output is then HF's on the trainer's current weights."""
    import torch

    from trainers.grpo import build_grpo_trainer, check_inputs
    from trainers.rewards import SampleTap

    make_table("c.sync", memo_pairs * 2)
    cfg = _card(tiny_base, "c.sync", "colo-sync", max_steps=1)
    base, data = check_inputs(cfg)
    plan = plan_generation(cfg, "cpu", has_vllm=True)
    trainer, _, _ = build_grpo_trainer(cfg, base, data, tmp_path, [], SampleTap(keep=0), plan)
    engine = trainer.vllm_generation.llm.llm_engine.model_executor.driver_worker
    engine_model = engine.model_runner.model

    def engine_embed() -> torch.Tensor:
        return engine_model.state_dict()["model.embed_tokens.weight"].clone()

    loaded = engine_embed()
    before = engine_greedy(trainer)
    trainer.train()
    # One tiny step rarely moves a greedy pick; seeded noise on top makes sure it does.
    policy = trainer.model
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for _, param in sorted(policy.named_parameters()):
            param.add_(torch.randn(param.shape, generator=generator) * 0.05)
    trainer.vllm_generation.sync_weights()
    synced = engine_embed()
    trained = policy.get_input_embeddings().weight.detach().to(synced.dtype)
    assert not torch.equal(loaded, synced)  # the step changed the weights and they arrived
    assert torch.equal(synced, trained)
    # Equal weights are not enough: the engine must COMPUTE with them. The tied lm_head
    # kept a packed copy of the old embedding after vLLM 0.32's CPU reload.
    expected = hf_greedy(policy)
    assert expected != before  # the new weights do change the greedy output
    assert engine_greedy(trainer) == expected


PROMPTS = [[1, 504, 3145, 282, 260], [1, 19556, 28, 638]]  # token ids: no tokenizer drift
GREEDY_TOKENS = 6


def engine_greedy(trainer) -> list[list[int]]:  # type: ignore[no-untyped-def]
    from vllm import SamplingParams

    params = SamplingParams(temperature=0.0, max_tokens=GREEDY_TOKENS, ignore_eos=True)
    prompts = [{"prompt_token_ids": ids} for ids in PROMPTS]
    outputs = trainer.vllm_generation.llm.generate(prompts, params, use_tqdm=False)
    return [list(out.outputs[0].token_ids) for out in outputs]


def hf_greedy(model) -> list[list[int]]:  # type: ignore[no-untyped-def]
    """Argmax decoding by hand: no generation config (EOS, min length) in the way."""
    import torch

    rows, was_training = [], model.training
    model.eval()
    with torch.no_grad():
        for ids in PROMPTS:
            tokens = list(ids)
            for _ in range(GREEDY_TOKENS):
                logits = model(input_ids=torch.tensor([tokens], device=model.device)).logits
                tokens.append(int(logits[0, -1].argmax()))
            rows.append(tokens[len(ids) :])
    model.train(was_training)
    return rows
