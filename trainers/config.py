"""Run-card models for the `sft` and `grpo` job kinds.

One pydantic model per kind is the single truth for a training run's settings: the
run card's front matter, the CLI and the Train page form all come from it. A `preset`
fills every field the card leaves out (see `trainers.presets`); anything written in
the card wins. Importing this module never imports torch.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic.json_schema import JsonDict
from pydantic_core import InitErrorDetails, PydanticCustomError

from podium.errors import InvalidInput
from podium.store.catalog.table_name import TableName
from podium.store.read.refs import TableRef
from trainers.async_rules import ASYNC_SCHEDULERS as ASYNC_SCHEDULERS
from trainers.async_rules import async_problems
from trainers.presets import DEFAULT_PRESET, PRESET_NAMES, length_reward, preset_defaults

_OUT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class TrainConfig(BaseModel):
    """Settings shared by SFT and GRPO."""

    model_config = {"extra": "forbid"}

    model: str = Field(description="Registered base model or checkpoint to start from.")
    table: TableRef = Field(description="Training data: an SFT table pinned to a snapshot.")
    out: str = Field(description="Name of the new checkpoint (letters, digits, . _ -).")
    preset: Literal["cpu-smoke", "cpu-small", "gpu"] = Field(
        DEFAULT_PRESET,
        description="Preset that fills every setting left out (`podium train presets`).",
    )
    method: Literal["full", "lora"] = Field(
        "full", description="Full fine-tune, or LoRA adapters merged into a full checkpoint."
    )
    lora_r: int = Field(16, ge=1, description="LoRA rank.")
    lora_alpha: int = Field(32, ge=1, description="LoRA alpha (scale = alpha / r).")
    lora_dropout: float = Field(0.05, ge=0, lt=1, description="Dropout on LoRA inputs.")
    lora_target_modules: str = Field(
        "all-linear", description="Modules that get adapters (peft syntax, e.g. all-linear)."
    )
    max_steps: int = Field(4, ge=1, description="Optimizer steps to run.")
    batch_size: int = Field(2, ge=1, description="Sequences per device per step.")
    grad_accum: int = Field(1, ge=1, description="Gradient accumulation steps.")
    learning_rate: float = Field(5e-4, gt=0, description="Peak learning rate.")
    lr_scheduler: str = Field("linear", description="transformers LR scheduler name.")
    warmup_steps: int = Field(0, ge=0, description="Linear warm-up steps.")
    max_length: int = Field(256, ge=16, description="Longest tokenized sequence (truncated).")
    seed: int = Field(0, description="Seed for data order, initialisation and sampling.")
    eval_fraction: float = Field(
        0.0,
        ge=0,
        lt=0.5,
        description="Share of rows held out for evaluation (0 = none); a table with its own "
        "eval/validation/test split uses that instead.",
    )
    max_eval_rows: int = Field(64, ge=1, description="Evaluate on at most this many rows.")
    save_every: int = Field(
        0, ge=0, description="Save and register a checkpoint every N steps (0 = only at the end)."
    )
    logging_steps: int = Field(1, ge=1, description="Report metrics every N steps.")
    max_rows: int | None = Field(None, ge=1, description="Use at most this many rows.")
    only_valid: bool = Field(
        False, description="Skip rows that the table's latest validation report marks malformed."
    )
    exclude_signals: list[str] = Field(
        [],
        description="Skip rows a current signal names: near-dup or exact-dup (all but each "
        "cluster's canonical row), contamination, private-data, or SIGNAL=VALUE (e.g. "
        "private-data=secret, language=fr); see `podium signals`.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="Where to train; auto = cuda when available."
    )

    @model_validator(mode="before")
    @classmethod
    def _fill_from_preset(cls, data: Any) -> Any:
        if isinstance(data, dict):
            preset = data.get("preset") or DEFAULT_PRESET
            if preset not in PRESET_NAMES:
                raise ValueError(f"unknown preset {preset!r}; use one of {', '.join(PRESET_NAMES)}")
            filled = {**cls._preset_values(preset), **data, "preset": preset}
            if "rewards" in cls.model_fields and "rewards" not in data:  # GRPO
                filled["rewards"] = length_reward(filled["max_completion_length"])
            data = filled
        return data

    @classmethod
    def _preset_values(cls, preset: str) -> dict[str, Any]:
        kind = "grpo" if cls is GrpoConfig else "sft"
        return {k: v for k, v in preset_defaults(kind, preset).items() if k in cls.model_fields}

    @classmethod
    def applied_defaults(cls) -> tuple[str, dict[str, Any]]:
        """What a card naming no preset gets (`cpu-smoke`'s values): the CLI help shows
        these, not the fields' own defaults, which a preset always overrides."""
        return f"preset {DEFAULT_PRESET}", cls._preset_values(DEFAULT_PRESET)

    @field_validator("out")
    @classmethod
    def _valid_out(cls, value: str) -> str:
        if not _OUT_NAME.match(value):
            raise ValueError(
                "checkpoint name must start with a letter or digit and use only letters, "
                "digits, '.', '_' and '-' (at most 100 characters)"
            )
        return value


class SftConfig(TrainConfig):
    """`kind: sft` — supervised fine-tuning on the assistant turns of a chat table."""

    packing: bool = Field(False, description="Pack several conversations into one sequence.")


class RewardSpec(BaseModel):
    """One reward: `rule` names what is scored, `weight` its share of the total."""

    model_config = {"extra": "forbid"}

    rule: str = Field(
        description="validate:RULE (a validation rule passes = 1), sandbox:output (the "
        "completion's code prints the expected output), sandbox:tests (the row's unit tests "
        "pass), exact_match (equals the reference answer), length:N (penalty beyond N chars)."
    )
    weight: float = Field(1.0, description="Weight in the summed reward.")

    @classmethod
    def parse(cls, text: str) -> RewardSpec:
        """`RULE[*WEIGHT]` as written on the command line, e.g. `validate:json*2`."""
        rule, star, weight = text.strip().partition("*")
        if not rule:
            raise InvalidInput(f"Empty reward {text!r}; write RULE or RULE*WEIGHT.")
        try:
            return cls(rule=rule.strip(), weight=float(weight) if star else 1.0)
        except ValueError:
            raise InvalidInput(
                f"Reward weight in {text!r} is not a number; write RULE*WEIGHT, "
                "e.g. exact_match*0.5."
            ) from None


# Marks a GrpoConfig field that only rollout: async reads: a sync card that sets one is
# refused, not ignored, and the Train page shows them only for async. ASYNC_ONLY (below
# the model) is the one list, read from these marks.
_ASYNC: JsonDict = {"async_only": True}


class GrpoConfig(TrainConfig):
    """`kind: grpo` — group-relative policy optimisation with rewards from Podium's parts."""

    rewards: list[RewardSpec] = Field(
        default_factory=lambda: [RewardSpec(rule="length:72")],
        description="Rewards, summed with their weights. The presets' default is a length "
        "penalty from 3 characters a token of max_completion_length (length:72 for 24 "
        "tokens), which varies within a group and so always gives a learning signal.",
    )
    num_generations: int = Field(4, ge=2, description="Completions sampled per prompt.")
    max_completion_length: int = Field(24, ge=1, description="Longest completion in tokens.")
    temperature: float = Field(1.0, gt=0, description="Sampling temperature.")
    beta: float = Field(0.0, ge=0, description="KL penalty against the base model (0 = none).")
    use_vllm: bool = Field(
        False,
        description="Generate with vLLM inside the trainer (a GPU, or vLLM's CPU build); "
        "where vLLM is not importable, TRL's own generation is used and the job log says so.",
    )
    vllm_mode: Literal["colocate", "server"] = Field(
        "colocate",
        description="colocate: vLLM inside the training process on the same GPU; server: a "
        "`trl vllm-serve` on another GPU at vllm_server_url.",
    )
    vllm_server_url: str | None = Field(
        None, description="Base URL of the `trl vllm-serve` server (vllm_mode: server)."
    )
    vllm_gpu_memory_utilization: float = Field(
        0.3, gt=0, le=0.95, description="GPU memory share for the colocated vLLM engine."
    )
    samples_per_log: int = Field(2, ge=0, description="Sample completions reported per log.")
    rollout: Literal["sync", "async"] = Field(
        "sync",
        description="sync: TRL's trainer generates and learns in one process; async: vLLM "
        "replicas generate on Ray while a separate learner trains (trainers/async_rl).",
    )
    replicas: int = Field(
        1,
        ge=1,
        description="Generation replicas (vLLM servers) for async.",
        json_schema_extra=_ASYNC,
    )
    max_staleness: int = Field(
        1,
        ge=0,
        description="Async: a sample is trained on at most this many policy versions after "
        "the weights that generated it (0 = on-policy).",
        json_schema_extra=_ASYNC,
    )
    weight_sync: Literal["gloo", "nccl", "disk"] = Field(
        "gloo",
        description="Async: how new weights reach the replicas (gloo on CPU, nccl on GPU, "
        "disk = safetensors file and reload).",
        json_schema_extra=_ASYNC,
    )
    weight_swap: Literal["barrier", "rolling"] = Field(
        "barrier",
        description="Async: how a push lands. barrier: every replica stops generating until "
        "the new weights are loaded into all of them; rolling: one replica at a time, the "
        "others keep generating, each replica's version moving as its own load lands.",
        json_schema_extra=_ASYNC,
    )
    learner_ranks: int = Field(
        1,
        ge=1,
        description="Async: learner processes, each holding a dim-0 shard of every parameter "
        "and sending it to every replica (FSDP2: gloo on CPU; NCCL with device: cuda, rank r "
        "on GPU r, as many GPUs as ranks).",
        json_schema_extra=_ASYNC,
    )
    learner_rank_timeout_s: float = Field(
        120.0,
        ge=5,
        le=1800,
        description="Async, learner_ranks > 1: seconds a learner rank waits for another in "
        "a collective before the job fails naming the ranks (a node cut off by the network "
        "or a stalled process; torch's own default is 1,800 s). Raise it only for ranks "
        "that really lag each other that long.",
        json_schema_extra=_ASYNC,
    )
    placement: Literal["separate", "colocated"] = Field(
        "separate",
        description="Async: separate: the learner and every replica on GPUs of their own; "
        "colocated: the learner and its one replica share one GPU (the replica takes "
        "vllm_gpu_memory_utilization of it, the learner the rest) and pushes go through "
        "vLLM's CUDA IPC engine (weight_sync: nccl, a GPU).",
        json_schema_extra=_ASYNC,
    )
    ppo_minibatches: int = Field(
        1,
        ge=1,
        description="Async: optimizer steps a batch is cut into. With more than one (or "
        "ppo_epochs > 1) the policy moves within a batch and the PPO clip acts "
        "(the clip_fraction metric).",
        json_schema_extra=_ASYNC,
    )
    ppo_epochs: int = Field(
        1, ge=1, description="Async: passes over each batch.", json_schema_extra=_ASYNC
    )
    rollouts: TableName | None = Field(
        None,
        description="Async: Iceberg table (NAMESPACE.TABLE) every generated sample is written "
        "to. Left empty it is rollouts.<out>, in a namespace of its own (out grpo-1 gives "
        "rollouts.grpo_1).",
        json_schema_extra=_ASYNC,
    )

    @model_validator(mode="after")
    def _batch_fits_group(self) -> GrpoConfig:
        total = self.batch_size * self.grad_accum
        if total % self.num_generations:
            raise ValueError(
                f"batch_size*grad_accum ({total}) must be a multiple of num_generations "
                f"({self.num_generations}): GRPO compares the completions of one prompt"
            )
        if not self.rewards:
            raise ValueError("at least one reward is needed")
        if self.max_completion_length >= self.max_length:
            raise ValueError(
                f"max_length ({self.max_length}) must exceed max_completion_length "
                f"({self.max_completion_length}): it caps prompt plus completion tokens"
            )
        if self.use_vllm and self.vllm_mode == "server" and not self.vllm_server_url:
            raise ValueError("vllm_mode: server needs vllm_server_url (the trl vllm-serve URL)")
        if self.rollout == "sync":
            ignored = [
                f
                for f in ASYNC_ONLY
                if getattr(self, f) != type(self).model_fields[f].get_default()
            ]
            if ignored:
                raise ValueError(
                    f"{', '.join(ignored)} only apply to rollout: async (this card is sync); "
                    "add --rollout async, or leave them out"
                )
        else:
            _refuse(async_problems(self))
        return self


ASYNC_ONLY: tuple[str, ...] = tuple(
    name
    for name, info in GrpoConfig.model_fields.items()
    if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("async_only")
)


def _refuse(problems: list[tuple[str, Any, str]]) -> None:
    """Raise every problem as a validation error located at its own field, so the
    message names the field and its option (podium/jobs/fields.py), not the whole card."""
    if problems:
        raise ValidationError.from_exception_data(
            "GrpoConfig",
            [
                InitErrorDetails(
                    type=PydanticCustomError("value_error", "{reason}", {"reason": reason}),
                    loc=(name,),
                    input=value,
                )
                for name, value, reason in problems
            ],
        )
