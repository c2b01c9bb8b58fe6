"""The bridge from TRL's training loop to Podium's Reporter.

`ReporterCallback` forwards every `on_log` (loss, learning rate, grad norm, token
accuracy; for GRPO reward mean/std per reward and completion length) plus tokens/s,
reports progress (with an "evaluating" phase while TRL evaluates), saves + registers
periodic checkpoints, and stops the run when the job is cancelled: the last state is
then saved and registered as a periodic checkpoint, and `Cancelled` is raised once TRL
has returned.

The worker stops a job with SIGTERM. During training that signal is held until the
step (or the evaluation batch) in hand ends, the state is saved and registered, and
only then does the job's own SIGTERM handling run (which ends it as cancelled, or
requeued when the worker is shutting down). So a cancelled run always keeps its step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from podium.reporting import Reporter
from trainers.checkpoints import CheckpointWriter
from trainers.held_sigterm import HeldSigterm
from trainers.learning_signal import no_signal_warning

# TRL logs these once at the end; they are summaries, not per-step curves.
_SUMMARY_KEYS = {
    "train_runtime",
    "train_samples_per_second",
    "train_steps_per_second",
    "total_flos",
    "train_loss",
    "epoch",
}


class ReporterCallback(TrainerCallback):
    def __init__(
        self,
        reporter: Reporter,
        writer: CheckpointWriter,
        save_every: int,
        samples: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.reporter = reporter
        self.writer = writer
        self.save_every = save_every
        self.samples = samples
        self.cancelled = False
        self.history: list[dict[str, float]] = []
        self._t0 = time.monotonic()
        self._last_tokens: float | None = None
        self._last_time = self._t0
        self._model: Any = None
        self._evaluating = False
        self._told_no_signal = False
        self._sigterm = HeldSigterm()  # received during training: handled at step end

    def _stop_for_signal(self, model: Any, state: TrainerState) -> None:
        """Save and register the state at its step (marked partial), then let SIGTERM do
        what it would have."""
        step = state.global_step
        if self.writer.last_step != step:
            self.writer.save(model or self._model, step, final=False)
        self.writer.stopped(step, state.max_steps)
        self.reporter.log(f"stopping at step {step} (SIGTERM); its state is registered")
        self._sigterm.deliver()  # e.g. the job's handler: raises, ending it as cancelled
        self.cancelled = True  # no handler of its own: end as a cancel

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        self._model = model
        self._t0 = self._last_time = time.monotonic()
        self._sigterm.hold()
        self.reporter.progress(0, state.max_steps, "training started")

    def on_train_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        self._sigterm.release()

    def on_prediction_step(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        """Between evaluation batches: say so, and honour a SIGTERM without waiting for
        the whole evaluation (minutes on a CPU)."""
        if not self._evaluating:
            self._evaluating = True
            self.reporter.phase(f"evaluating after step {state.global_step}")
        if self._sigterm.requested:
            self._stop_for_signal(model, state)

    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        self._evaluating = False
        self.reporter.progress(state.global_step, state.max_steps, f"step {state.global_step}")

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> TrainerControl:
        if control.should_evaluate:  # TRL evaluates next; it can take minutes on a CPU
            self._evaluating = True
            self.reporter.progress(
                state.global_step, state.max_steps, f"step {state.global_step} · evaluating"
            )
        else:
            self.reporter.progress(state.global_step, state.max_steps, f"step {state.global_step}")
        if self._sigterm.requested:
            self._stop_for_signal(model, state)
            control.should_training_stop = True
            return control
        if self.reporter.is_cancelled():
            self.cancelled = True
            control.should_training_stop = True
            self.writer.save(model or self._model, state.global_step, final=False)
            self.reporter.log(
                f"stopping at step {state.global_step} (cancelled); its state is registered"
            )
            return control
        if (
            self.save_every
            and state.global_step % self.save_every == 0
            and state.global_step < state.max_steps
        ):
            self.writer.save(model or self._model, state.global_step, final=False)
        return control

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> TrainerControl:
        values = {
            k: float(v)
            for k, v in (logs or {}).items()
            if isinstance(v, int | float) and k not in _SUMMARY_KEYS and math.isfinite(v)
        }
        tokens = values.get("num_tokens")
        now = time.monotonic()
        if tokens is not None:
            if (
                self._last_tokens is not None
                and now > self._last_time
                and tokens > self._last_tokens
            ):
                values["tokens_per_s"] = (tokens - self._last_tokens) / (now - self._last_time)
            elif self._last_tokens is None and now > self._t0:
                values["tokens_per_s"] = tokens / (now - self._t0)
            self._last_tokens, self._last_time = tokens, now
        if values:
            self.history.append({"step": float(state.global_step), **values})
            self.reporter.metric(state.global_step, values)
            if not self._told_no_signal:  # GRPO only: SFT logs no reward
                warning = no_signal_warning(self.history)
                if warning:
                    self._told_no_signal = True
                    self.reporter.warn(warning)
        if self.samples is not None:
            for sample in self.samples():
                self.reporter.sample(state.global_step, sample)
        return control
