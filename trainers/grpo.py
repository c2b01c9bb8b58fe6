"""`kind: grpo` — group-relative policy optimisation with TRL's GRPOTrainer.

    podium train grpo --model base --table demo.json_sft --out json-grpo \
        --reward validate:json --reward length:200*0.2 --preset cpu-smoke
    podium train grpo ... --preset gpu     # vLLM colocated on the GPU

Each prompt is a conversation up to its last assistant turn; that turn is the
reference answer for `exact_match` and `sandbox:output` (see `trainers.rewards`).

How generation works, and how new weights reach the generator:

- CPU (and `use_vllm: false`): TRL samples `num_generations` completions per prompt
  with `model.generate` from transformers, so each step generates from the weights
  being trained; nothing has to be copied.
- GPU with `use_vllm: true` (the `gpu` preset): TRL's *colocate* mode builds a
  `vllm.LLM` inside the training process on the same GPU (`external_launcher`
  executor, `vllm_gpu_memory_utilization` of its memory). Before each generation
  step TRL's `VLLMGeneration._iter_named_params` walks the policy's parameters (with
  LoRA merged into the base weights for the walk, then unmerged) and vLLM's in-place
  `reload_weights` takes each tensor (`trainers/vllm_sync.py` says why not TRL's own
  `load_weights` call): a copy inside one process, with no serialisation, no NCCL and
  no server. The prefix cache is then reset so no stale KV from the old weights is
  reused. vLLM's CPU build runs the same path where it is importable. (TRL's other mode, `server`,
  broadcasts the same tensors to a separate `trl vllm-serve` process over NCCL.)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.reporting import JobOutputs, Reporter
from trainers.config import GrpoConfig
from trainers.data import TrainingData, fit_prompts, grpo_dataset
from trainers.generation import GenerationPlan, plan_generation, vllm_importable
from trainers.lifecycle import (
    as_config,
    check_card,
    finish_run,
    first_and_last,
    registers_nothing_if_failed,
    start_run,
)
from trainers.rewards import SampleTap, build_rewards, check_rewards
from trainers.runtime import (
    BaseModelRef,
    configure_attention,
    load_model,
    load_tokenizer,
    peft_config,
    prepare_env,
    resolve_device,
    trainer_args,
)
from trainers.vllm_sync import sync_by_reload


def check_inputs(cfg: GrpoConfig) -> tuple[BaseModelRef, TrainingData]:
    """Everything that can be wrong with a card, found before any compute."""
    check_rewards(cfg.rewards, *_table_context(cfg))
    return check_card(cfg)


def _table_context(cfg: GrpoConfig) -> tuple[dict[str, str], str]:
    """The table's properties (a stored JSON Schema for `validate:json-schema`) and name."""
    from podium.store.catalog.catalog import load_table

    return dict(load_table(cfg.table.name).properties), cfg.table.name


def build_grpo_trainer(
    cfg: GrpoConfig,
    base: BaseModelRef,
    data: TrainingData,
    output_dir: Path,
    callbacks: list[Any],
    tap: SampleTap,
    generation: GenerationPlan,
) -> tuple[Any, Any, GrpoDatasets]:
    from trl import GRPOConfig, GRPOTrainer

    device = resolve_device(cfg.device)
    configure_attention(device)
    tokenizer = load_tokenizer(base.path)
    datasets = grpo_datasets(cfg, data, tokenizer)
    funcs, weights = build_rewards(cfg.rewards, tap, *_table_context(cfg))
    args = GRPOConfig(
        **{
            **trainer_args(cfg, device, output_dir, has_eval=datasets.eval is not None),
            # One prompt's group per evaluation batch: TRL needs whole groups there.
            "per_device_eval_batch_size": cfg.num_generations,
        },
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length,
        temperature=cfg.temperature,
        beta=cfg.beta,
        reward_weights=weights,
        log_completions=False,
        **generation.args,
    )
    trainer = GRPOTrainer(
        model=load_model(base.path, device, frozen_base=cfg.method == "lora"),
        # TRL types rewards as returning list[float | None]; ours return list[float], which
        # the invariant list type refuses though TRL accepts it.
        reward_funcs=funcs,  # type: ignore[arg-type]
        args=args,
        train_dataset=datasets.train,
        eval_dataset=datasets.eval,
        processing_class=tokenizer,
        peft_config=peft_config(cfg),
        callbacks=callbacks,
    )
    if generation.args.get("vllm_mode") == "colocate":
        sync_by_reload(trainer.vllm_generation)
    return trainer, tokenizer, datasets


@dataclass(frozen=True)
class GrpoDatasets:
    train: Any
    eval: Any | None
    too_long: int  # prompts left out because they exceed max_length - max_completion_length


def grpo_datasets(cfg: GrpoConfig, data: TrainingData, tokenizer: Any) -> GrpoDatasets:
    """Train (and eval) prompts that leave max_completion_length room within max_length."""
    budget = cfg.max_length - cfg.max_completion_length
    train, dropped = fit_prompts(grpo_dataset(data.train), tokenizer, budget)
    evals = None
    if data.eval:
        evals, dropped_eval = fit_prompts(grpo_dataset(data.eval), tokenizer, budget)
        dropped += dropped_eval
    return GrpoDatasets(train, evals, dropped)


def run_grpo(config: GrpoConfig, reporter: Reporter) -> JobOutputs:
    prepare_env()  # before torch loads (trainers.callbacks imports it): OpenMP reads it once
    cfg = as_config(config, GrpoConfig)
    if cfg.rollout == "async":  # replicas on Ray + a separate learner: trainers/async_rl
        from trainers.async_rl.job import run_async_grpo

        return run_async_grpo(cfg, reporter)
    base, data = check_inputs(cfg)
    reporter.log(
        f"grpo on {data.table}@{data.snapshot_id}: {len(data.train)} prompts / "
        f"{len(data.eval)} eval; base {base.name}; "
        f"rewards {', '.join(f'{r.rule}*{r.weight:g}' for r in cfg.rewards)}"
    )
    generation = plan_generation(cfg, resolve_device(cfg.device), vllm_importable())
    if generation.notice:
        reporter.log(generation.notice)
    reporter.check_cancelled()
    tap = SampleTap(keep=cfg.samples_per_log)
    rewards_lineage = {"rewards": [r.model_dump() for r in cfg.rewards]}
    run = start_run("grpo", cfg, base, data, reporter, rewards_lineage, samples=tap.take)
    with registers_nothing_if_failed(run):
        trainer, tokenizer, datasets = build_grpo_trainer(
            cfg, base, data, run.work_dir, [run.callback], tap, generation
        )
        if datasets.too_long:
            reporter.log(
                f"{datasets.too_long} prompts left out: longer than max_length - "
                f"max_completion_length ({cfg.max_length - cfg.max_completion_length} tokens)"
            )
        run.writer.tokenizer = tokenizer
        trainer.train()
        first_reward, last_reward = first_and_last(run.callback.history, "reward")
        return finish_run(
            run,
            trainer,
            {
                "first_reward": first_reward,
                "last_reward": last_reward,
                "prompts": len(datasets.train),
                "snapshot_id": data.snapshot_id,
            },
        )
