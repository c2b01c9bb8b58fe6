"""`kind: sft` — supervised fine-tuning on a table snapshot with TRL's SFTTrainer.

    podium train sft --model base --table demo.json_sft --out json-sft --preset cpu-smoke
    podium train sft --model base --table demo.json_sft --out json-lora --preset cpu-small
    podium train sft --model base --table demo.json_sft --out json-gpu --preset gpu --card run.md

The loss covers assistant turns only (TRL's `assistant_only_loss` with a training copy
of the chat template, see `trainers.chat_template`). LoRA adapters are merged into a
full checkpoint whenever one is saved. Every check on the inputs runs before a model
loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podium.reporting import JobOutputs, Reporter
from trainers.checkpoints import (
    CheckpointWriter,
    check_root_free,
    checkpoint_root,
    finish_training,
    run_lineage,
)
from trainers.config import SftConfig
from trainers.data import TrainingData, load_training_data, sft_dataset
from trainers.runtime import (
    BaseModelRef,
    check_out_name,
    configure_attention,
    load_model,
    load_tokenizer,
    peft_config,
    prepare_env,
    resolve_base,
    resolve_device,
    trainer_args,
)


def check_inputs(cfg: SftConfig) -> tuple[BaseModelRef, TrainingData]:
    """Everything that can be wrong with a card, found before any compute."""
    resolve_device(cfg.device)  # a card asking for cuda on a CPU machine fails here
    base = resolve_base(cfg.model)
    check_out_name(cfg.out)
    check_root_free(cfg.out)
    data = load_training_data(
        cfg.table,
        only_valid=cfg.only_valid,
        max_rows=cfg.max_rows,
        eval_fraction=cfg.eval_fraction,
        seed=cfg.seed,
        max_eval_rows=cfg.max_eval_rows,
    )
    return base, data


def build_sft_trainer(
    cfg: SftConfig, base: BaseModelRef, data: TrainingData, output_dir: Path, callbacks: list[Any]
) -> tuple[Any, Any]:
    """The SFTTrainer for `cfg` and the tokenizer (with its original chat template)."""
    from trl import SFTConfig, SFTTrainer

    from trainers.chat_template import training_template

    device = resolve_device(cfg.device)
    configure_attention(device)
    tokenizer = load_tokenizer(base.path)
    train_tok = load_tokenizer(base.path)
    train_tok.chat_template = training_template(tokenizer)
    args = SFTConfig(
        **trainer_args(cfg, device, output_dir, has_eval=bool(data.eval)),
        max_length=cfg.max_length,
        packing=cfg.packing,
        assistant_only_loss=True,
        dataset_num_proc=None,
    )
    trainer = SFTTrainer(
        model=load_model(base.path, device),
        args=args,
        train_dataset=sft_dataset(data.train),
        eval_dataset=sft_dataset(data.eval) if data.eval else None,
        processing_class=train_tok,
        peft_config=peft_config(cfg),
        callbacks=callbacks,
    )
    return trainer, tokenizer


def run_sft(config: SftConfig, reporter: Reporter) -> JobOutputs:
    """Train, save, register; returns the registered checkpoints."""
    prepare_env()  # before torch loads (trainers.callbacks imports it): OpenMP reads it once
    from trainers.callbacks import ReporterCallback

    cfg = (
        SftConfig.model_validate(config.model_dump())
        if not isinstance(config, SftConfig)
        else config
    )
    base, data = check_inputs(cfg)
    reporter.log(
        f"sft on {data.table}@{data.snapshot_id}: {len(data.train)} train / {len(data.eval)} eval "
        f"conversations ({data.skipped_no_assistant} without assistant turns and "
        f"{data.skipped_invalid} malformed skipped); base {base.name}; {cfg.method}"
    )
    reporter.check_cancelled()
    writer = CheckpointWriter(
        out=cfg.out,
        base_name=base.name,
        tokenizer=None,
        lineage=run_lineage("sft", cfg, base.name, data.snapshot_id, reporter),
        reporter=reporter,
    )
    callback = ReporterCallback(reporter, writer, cfg.save_every)
    work_dir = checkpoint_root(cfg.out) / ".trainer"
    trainer, tokenizer = build_sft_trainer(cfg, base, data, work_dir, [callback])
    writer.tokenizer = tokenizer
    result = trainer.train()
    final = finish_training(trainer, callback.cancelled, writer, work_dir)
    losses = [h["loss"] for h in callback.history if "loss" in h]
    return JobOutputs(
        checkpoints=[info.name for info in writer.saved],
        summary={
            "checkpoint": final.name,
            "path": final.path,
            "steps": trainer.state.global_step,
            "train_loss": float(result.training_loss),
            "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None,
            "rows": len(data.train),
            "snapshot_id": data.snapshot_id,
        },
    )
