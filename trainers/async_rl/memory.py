"""Whether an async GRPO run fits this machine's memory, before anything starts, and
what a Ray out-of-memory failure says, in one line.

The run needs `replicas` vLLM engines (podium.models.memory.engine_bytes) and one
learner: float32 weights, gradients and Adam's two moments (16 bytes a parameter), a
reference copy when `beta` > 0 (on every rank), the activations and logits of one
forward pass (`batch_size` samples: a batch of `batch_size x grad_accum` accumulates)
at `max_length`, and the process's own runtime. A plan that does not fit is refused with
what to lower; the job checks again when it starts (a server may have started since).

    plan = async_memory_plan(cfg, checkpoint)     # None: the checkpoint's size is unknown
    check_async_memory(cfg, checkpoint)           # InvalidInput naming what to lower
    ray_oom_line(exc, "starting the replicas")    # "Ray ran out of memory while ..." or None
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from podium.errors import InvalidInput
from podium.models.memory import GIB, checkpoint_params, engine_bytes, gb, usable_bytes
from trainers.config import GrpoConfig

TRAINED_BYTES_PER_PARAM = 16  # fp32 weights + gradients + Adam's exp_avg and exp_avg_sq
LEARNER_RUNTIME_BYTES = 1 * GIB  # torch, the tokenizer, the job's own process
# Per token and layer, the activations autograd keeps (attention and MLP inputs and
# outputs, norms) in float32: about 16 hidden-sized vectors.
ACTIVATION_VECTORS_PER_LAYER = 16
LOGIT_COPIES = 3  # logits, their log-softmax, and its gradient


@dataclass(frozen=True)
class AsyncMemoryPlan:
    params: int
    replicas: int
    engine: int  # bytes, each replica
    learner: int  # bytes, every learner rank together
    activations: int  # bytes of `learner` that grow with max_length x batch

    @property
    def need(self) -> int:
        return self.replicas * self.engine + self.learner

    def describe(self) -> str:
        return (
            f"{self.replicas} replica(s) x {gb(self.engine)} vLLM engine + "
            f"{gb(self.learner)} learner = {gb(self.need)}"
        )


def _model_shape(checkpoint: Path) -> tuple[int, int, int] | None:
    """(layers, hidden size, vocabulary) from config.json, or None."""
    try:
        config = json.loads((checkpoint / "config.json").read_text())
    except (OSError, ValueError):
        return None
    config = config.get("text_config") or config
    keys = ("num_hidden_layers", "hidden_size", "vocab_size")
    values = [config.get(k) for k in keys]
    if not all(isinstance(v, int) and v > 0 for v in values):
        return None
    return values[0], values[1], values[2]


def _on_gpu(cfg: GrpoConfig) -> bool:
    from podium.models.vllm_launch import has_gpu

    return cfg.device != "cpu" and has_gpu()


def async_memory_plan(
    cfg: GrpoConfig, checkpoint: str | Path, *, gpu: bool | None = None
) -> AsyncMemoryPlan | None:
    """The host memory the run needs; None when the checkpoint's size is unknown."""
    checkpoint = Path(checkpoint)
    gpu = _on_gpu(cfg) if gpu is None else gpu
    params = checkpoint_params(checkpoint)
    engine = engine_bytes(checkpoint, gpu=gpu)
    if params is None or engine is None:
        return None
    tokens = cfg.batch_size * cfg.max_length  # one micro-batch: the rest accumulates
    shape = _model_shape(checkpoint)
    if shape is None:
        per_token = 256 * 1024
    else:
        layers, hidden, vocab = shape
        per_token = 4 * (layers * hidden * ACTIVATION_VECTORS_PER_LAYER + vocab * LOGIT_COPIES)
    activations = tokens * per_token
    weights = params * 4
    if gpu:  # the training state and activations live in GPU memory
        learner = LEARNER_RUNTIME_BYTES + weights
        activations = 0
    else:
        reference = weights if cfg.beta > 0 else 0  # every rank holds a whole copy
        state = params * TRAINED_BYTES_PER_PARAM + reference
        # every further rank is a process of its own that gathers the full weights
        extra_ranks = (cfg.learner_ranks - 1) * (LEARNER_RUNTIME_BYTES + weights + reference)
        learner = LEARNER_RUNTIME_BYTES + state + activations + extra_ranks
    return AsyncMemoryPlan(params, cfg.replicas, engine, learner, activations)


def _cluster_configured() -> bool:
    """Replicas on a configured Ray cluster do not use this machine's memory."""
    from podium.config import get_settings

    return bool(os.environ.get("RAY_ADDRESS") or get_settings().ray_address)


def check_async_memory(
    cfg: GrpoConfig,
    checkpoint: str | Path,
    *,
    available: int | None = None,
    total: int | None = None,
    gpu: bool | None = None,
) -> AsyncMemoryPlan | None:
    """Refuse (InvalidInput) a run whose replicas and learner do not fit in the memory
    available now (`available`/`total`: bytes, measured here when left out)."""
    if available is None and _cluster_configured():
        return None
    plan = async_memory_plan(cfg, checkpoint, gpu=gpu)
    if plan is None:
        return None
    usable = usable_bytes(available, total)
    if plan.need <= usable:
        return plan
    advice = []
    if cfg.replicas > 1:
        advice.append(f"--replicas (each costs {gb(plan.engine)})")
    if plan.activations:
        advice.append(f"--max-length (now {cfg.max_length}: {gb(plan.activations)} of activations)")
    if cfg.learner_ranks > 1:
        advice.append(f"--learner-ranks (now {cfg.learner_ranks})")
    advice.append(f"a smaller model ({plan.params / 1e6:.0f}M parameters now)")
    raise InvalidInput(
        f"Not enough memory for this async run: it needs about {plan.describe()}, but "
        f"{gb(usable)} is free to use. Lower {', '.join(advice)}; or stop other vLLM "
        "servers (`podium models servers`, `podium models stop NAME`), or use --rollout sync."
    )


# What Ray's out-of-memory reports carry (ray.exceptions.OutOfMemoryError; an actor's
# death with exit type NODE_OUT_OF_MEMORY; the raylet's memory monitor text).
_OOM_MARKERS = (
    "NODE_OUT_OF_MEMORY",
    "running low on memory",
    "OOM kill reason",
    "out of memory issue",
)
_NODE_USAGE = re.compile(r"was ([\d.]+)\s*GB used / ([\d.]+)\s*GB limit")
_REPLICA_NAME = re.compile(r"name: \S*-replica-(\d+)")


def is_ray_oom(exc: BaseException) -> bool:
    from ray.exceptions import OutOfMemoryError

    if isinstance(exc, OutOfMemoryError):
        return True
    text = str(exc)
    return any(marker in text for marker in _OOM_MARKERS)


def ray_oom_line(exc: BaseException, during: str, replicas: int = 1) -> str | None:
    """One line for a Ray out-of-memory failure (None for any other error):
    `Ray ran out of memory while starting replica 1 of 2 (the node had 7.4 GB used of
    7.7 GB); lower --replicas or --max-length, or use a smaller model.`"""
    if not is_ray_oom(exc):
        return None
    text = str(exc)
    replica = _REPLICA_NAME.search(text)
    where = during
    if replica and during.startswith("starting"):
        where = f"starting replica {int(replica.group(1)) + 1} of {replicas}"
    usage = _NODE_USAGE.search(text)
    node = f" (the node had {usage.group(1)} GB used of {usage.group(2)} GB)" if usage else ""
    return (
        f"Ray ran out of memory while {where}{node}; lower --replicas or --max-length, "
        "or use a smaller model."
    )
