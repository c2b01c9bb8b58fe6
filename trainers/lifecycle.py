"""The steps every training kind takes around its TRL trainer, in order.

    cfg = as_config(config, SftConfig)          # the card as this kind's model
    base, data = check_card(cfg)                # every input checked before any compute
    run = start_run("sft", cfg, base, data, reporter)
    trainer = ...                               # the kind's own part: build it with
    with registers_nothing_if_failed(run):      # a failed run unregisters what it saved
        trainer.train()                         # run.callback, train in run.work_dir
        return finish_run(run, trainer, {...})  # final checkpoint + the job's outputs

Importing this module never imports torch: `trainers.callbacks` (which does) is loaded
in `start_run`, after the kind has called `prepare_env()`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from podium.errors import Cancelled
from podium.reporting import JobOutputs, Reporter
from trainers.checkpoints import (
    CheckpointWriter,
    check_root_free,
    checkpoint_root,
    finish_training,
    run_lineage,
)
from trainers.config import TrainConfig
from trainers.data import TrainingData, load_training_data
from trainers.runtime import BaseModelRef, check_out_name, resolve_base, resolve_device

if TYPE_CHECKING:
    from trainers.callbacks import ReporterCallback

Config = TypeVar("Config", bound=TrainConfig)


def as_config(config: TrainConfig, kind: type[Config]) -> Config:
    """The card as `kind`'s model (a job may hand over the shared base model)."""
    if isinstance(config, kind):
        return config
    return kind.model_validate(config.model_dump())


def check_card(cfg: TrainConfig) -> tuple[BaseModelRef, TrainingData]:
    """Everything that can be wrong with a card, found before any compute."""
    resolve_device(cfg.device)  # a card asking for cuda on a CPU machine fails here
    base = resolve_base(cfg.model)
    check_out_name(cfg.out)
    check_root_free(cfg.out)
    data = load_training_data(
        cfg.table,
        only_valid=cfg.only_valid,
        exclude_signals=cfg.exclude_signals,
        max_rows=cfg.max_rows,
        eval_fraction=cfg.eval_fraction,
        seed=cfg.seed,
        max_eval_rows=cfg.max_eval_rows,
    )
    return base, data


@dataclass(frozen=True)
class Run:
    """What saves, registers and reports one run's checkpoints, and TRL's work folder."""

    writer: CheckpointWriter
    callback: ReporterCallback
    work_dir: Path


def start_run(
    kind: str,
    cfg: TrainConfig,
    base: BaseModelRef,
    data: TrainingData,
    reporter: Reporter,
    lineage: dict[str, Any] | None = None,
    samples: Callable[[], list[dict[str, Any]]] | None = None,
) -> Run:
    """The checkpoint writer (its tokenizer set once the kind has loaded one) and the
    callback for a run; `lineage` adds to what every checkpoint records."""
    from trainers.callbacks import ReporterCallback

    writer = CheckpointWriter(
        out=cfg.out,
        base_name=base.name,
        tokenizer=None,
        lineage={
            **run_lineage(kind, cfg, base.name, data.snapshot_id, reporter),
            **(lineage or {}),
        },
        reporter=reporter,
    )
    callback = ReporterCallback(reporter, writer, cfg.save_every, samples=samples)
    return Run(writer, callback, checkpoint_root(cfg.out) / ".trainer")


@contextmanager
def registers_nothing_if_failed(run: Run) -> Iterator[None]:
    """A run that fails (anything but a cancel) unregisters and deletes the checkpoints
    it saved on the way: a failed job registers nothing. A cancelled one keeps them,
    marked partial (`CheckpointWriter.stopped`)."""
    try:
        yield
    except (Cancelled, KeyboardInterrupt):
        raise
    except BaseException:
        try:
            run.writer.discard()
        except Exception as exc:  # the run's own error is the one to report
            run.writer.reporter.log(f"could not unregister the run's checkpoints: {exc}")
        raise


def finish_run(run: Run, trainer: Any, summary: dict[str, Any]) -> JobOutputs:
    """Register the final checkpoint (or end a cancelled run) and say what the job made;
    `summary` is the kind's own figures, after the checkpoint, its path and the steps."""
    final = finish_training(trainer, run.callback.cancelled, run.writer, run.work_dir)
    return JobOutputs(
        checkpoints=[info.name for info in run.writer.saved],
        summary={
            "checkpoint": final.name,
            "path": final.path,
            "steps": trainer.state.global_step,
            **summary,
        },
    )


def first_and_last(history: list[dict[str, float]], key: str) -> tuple[float | None, float | None]:
    """The first and last logged value of `key` in a run's metrics (None if never logged)."""
    values = [entry[key] for entry in history if key in entry]
    return (values[0], values[-1]) if values else (None, None)
