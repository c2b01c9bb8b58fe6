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
from trainers.config import SftConfig
from trainers.data import TrainingData, sft_dataset
from trainers.lifecycle import (
    as_config,
    check_card,
    finish_run,
    first_and_last,
    registers_nothing_if_failed,
    start_run,
)
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
    cfg = as_config(config, SftConfig)
    base, data = check_card(cfg)
    reporter.log(
        f"sft on {data.table}@{data.snapshot_id}: {len(data.train)} train / {len(data.eval)} eval "
        f"conversations ({data.skipped_no_assistant} without assistant turns and "
        f"{data.skipped_invalid} malformed skipped); base {base.name}; {cfg.method}"
    )
    reporter.check_cancelled()
    run = start_run("sft", cfg, base, data, reporter)
    with registers_nothing_if_failed(run):
        trainer, tokenizer = build_sft_trainer(cfg, base, data, run.work_dir, [run.callback])
        run.writer.tokenizer = tokenizer
        result = trainer.train()
        first_loss, last_loss = first_and_last(run.callback.history, "loss")
        return finish_run(
            run,
            trainer,
            {
                "train_loss": float(result.training_loss),
                "first_loss": first_loss,
                "last_loss": last_loss,
                "rows": len(data.train),
                "snapshot_id": data.snapshot_id,
            },
        )
