"""Checkpoints come back into Podium: saved whole, then registered with lineage.

Every checkpoint, periodic or final, is a full Hugging Face directory (LoRA adapters
merged into a copy of the model) under `$PODIUM_HOME/checkpoints/<out>/<label>`. It is
written to a hidden temporary folder and renamed into place only when complete, and
registered only after the rename, so nothing half-written is ever registered. Periodic
checkpoints are registered as `<out>-step-<N>` when they are saved; the final one is
`<out>`. A run that is cancelled keeps its last one usable, marked partial ("cancelled
at step 3 of 10") in the registry and listed among its job's outputs; a run that fails
registers nothing (what it had saved is unregistered and deleted).
"""

from __future__ import annotations

import copy
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podium.config import get_settings
from podium.errors import Cancelled, InvalidInput
from podium.models.registry import ModelInfo, forget_models, mark_partial, register_checkpoint
from podium.reporting import JobOutputs, Reporter, stopped_at
from podium.store.schema import PROP_LINEAGE_PREFIX


def checkpoint_root(out: str) -> Path:
    return get_settings().home / "checkpoints" / out


def check_root_free(out: str) -> None:
    root = checkpoint_root(out)
    if root.exists() and any(p for p in root.iterdir() if not p.name.startswith(".")):
        raise InvalidInput(
            f"{root} already holds checkpoints from an earlier run named {out!r}; choose "
            "another --out name (or remove that folder)."
        )


def periodic_name(out: str, step: int) -> str:
    return f"{out}-step-{step}"


@dataclass
class CheckpointWriter:
    """Saves and registers the checkpoints of one run."""

    out: str
    base_name: str
    tokenizer: Any  # saved with each checkpoint, original chat template included
    lineage: dict[str, Any]
    reporter: Reporter
    saved: list[ModelInfo] = field(default_factory=list)
    last_step: int | None = None

    @property
    def job_id(self) -> str | None:
        return self.reporter.lineage.get(f"{PROP_LINEAGE_PREFIX}job_id")

    def save(self, model: Any, step: int, *, final: bool) -> ModelInfo:
        """Write `model` as a full checkpoint and register it."""
        label = "final" if final else f"step-{step}"
        name = self.out if final else periodic_name(self.out, step)
        root = checkpoint_root(self.out)
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".tmp-{label}-{uuid.uuid4().hex[:8]}"
        dest = root / label
        try:
            _save_model(_mergeable(model), tmp)
            self.tokenizer.save_pretrained(str(tmp))
            for path in tmp.iterdir():  # safetensors come out 0600; servers may run as others
                path.chmod(0o644)
            if dest.exists():
                shutil.rmtree(dest)
            os.rename(tmp, dest)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        lineage = {**self.lineage, "step": step, "final": final}
        info = register_checkpoint(
            name, dest, parent=self.base_name, job_id=self.job_id, lineage=lineage, step=step
        )
        self.saved.append(info)
        self.last_step = step
        self.reporter.log(f"checkpoint {name} (step {step}) registered at {dest}")
        return info

    def stopped(self, step: int, max_steps: int, how: str = "cancelled") -> None:
        """The run is cancelled (or failed, keeping what it saved: a lost learner) at
        `step` of `max_steps`: mark what it registered partial and tell the reporter, so
        the job lists it among its outputs."""
        note = stopped_at(how, step, max_steps, "step")
        names = [info.name for info in self.saved]
        if names:
            mark_partial(names, note)
        self.reporter.stopped_with(
            JobOutputs(checkpoints=names, summary={"partial": note, "steps": step})
        )

    def discard(self) -> None:
        """The run failed: unregister and delete every checkpoint it saved (a failed job
        registers nothing; its folders would also refuse a re-run of the same card)."""
        if not self.saved:
            return
        forget_models([info.name for info in self.saved])
        for info in self.saved:
            if info.path:
                shutil.rmtree(info.path, ignore_errors=True)
        names = ", ".join(info.name for info in self.saved)
        self.reporter.log(f"the run failed: checkpoint(s) {names} unregistered and deleted")
        self.saved.clear()


def _save_model(model: Any, folder: Path) -> None:
    """`save_pretrained`, keeping the base checkpoint's generation config as it was.

    transformers refuses to save a generation config it would only warn about when
    loading (top_k or top_p without do_sample, as some instruct checkpoints ship): the
    run's checkpoint failed at its very end. The config is written unvalidated instead:
    the trained checkpoint samples as its base did."""
    from transformers import GenerationConfig

    generation = getattr(model, "generation_config", None)
    if not isinstance(generation, GenerationConfig):
        model.save_pretrained(str(folder), safe_serialization=True)
        return
    model.generation_config = GenerationConfig()  # type: ignore[no-untyped-call]
    try:
        model.save_pretrained(str(folder), safe_serialization=True)
    finally:
        model.generation_config = generation
    generation.to_json_file(folder / "generation_config.json", use_diff=True)


def _mergeable(model: Any) -> Any:
    """The model to save: a merged copy for LoRA (training goes on with the adapters)."""
    from peft import PeftModel

    if isinstance(model, PeftModel):
        return copy.deepcopy(model).merge_and_unload()
    return model


def run_lineage(
    kind: str, cfg: Any, base_name: str, snapshot_id: int | None, reporter: Reporter
) -> dict[str, Any]:
    """What a checkpoint records about how it was made."""
    card = reporter.lineage.get(f"{PROP_LINEAGE_PREFIX}card")
    return {
        "kind": kind,
        "method": cfg.method,
        "base_model": base_name,
        "table": cfg.table.name,
        "snapshot_id": snapshot_id,
        "preset": cfg.preset,
        "seed": cfg.seed,
        "job_id": reporter.lineage.get(f"{PROP_LINEAGE_PREFIX}job_id"),
        "card": card if card is not None else cfg.model_dump_json(),
    }


def finish_training(
    trainer: Any, cancelled: bool, writer: CheckpointWriter, work_dir: Path
) -> ModelInfo:
    """After `trainer.train()`: register the final checkpoint, or end a cancelled run.

    A cancelled run raises `Cancelled`; the periodic checkpoint its callback saved on the
    way out stays registered, marked partial, and nothing is registered as final.
    """
    step = trainer.state.global_step
    if cancelled:
        writer.stopped(step, trainer.state.max_steps)
        kept = f"; checkpoint {writer.saved[-1].name} registered" if writer.saved else ""
        raise Cancelled(f"cancelled at step {step}{kept}")
    final = writer.save(trainer.model, step, final=True)
    shutil.rmtree(work_dir, ignore_errors=True)
    return final
