"""What an async GRPO card refuses by itself, whatever machine it runs on (the card's
model, `trainers.config.GrpoConfig`, raises each as an error at its own field). What
depends on the machine or the catalog (a GPU, how many, memory, a free rollouts table) is
the preflight's: `trainers/async_rl/host.py`. Importing this module never imports torch.
"""

from __future__ import annotations

from typing import Any, Protocol


class AsyncCard(Protocol):
    """What these rules read of a card (trainers.config.GrpoConfig, which imports them),
    read-only so that its Literal fields match."""

    @property
    def method(self) -> str: ...

    @property
    def device(self) -> str: ...

    @property
    def replicas(self) -> int: ...

    @property
    def learner_ranks(self) -> int: ...

    @property
    def placement(self) -> str: ...

    @property
    def weight_sync(self) -> str: ...

    @property
    def weight_swap(self) -> str: ...

    @property
    def lr_scheduler(self) -> str: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def grad_accum(self) -> int: ...

    @property
    def ppo_minibatches(self) -> int: ...


Problem = tuple[str, Any, str]  # (field, value, what is wrong and what to do)

# transformers LR schedules that need nothing but warm-up and length (reduce_lr_on_plateau
# wants a metric; cosine_with_min_lr and warmup_stable_decay want more arguments): the
# ones the async learner runs (trainers/async_rl/learner.py). Sync runs take any: TRL's.
ASYNC_SCHEDULERS = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "constant",
    "constant_with_warmup",
    "inverse_sqrt",
)


def async_problems(cfg: AsyncCard) -> list[Problem]:
    """Every setting of `cfg` an async run cannot take."""
    problems: list[Problem] = []
    if cfg.method != "full":
        problems.append(
            (
                "method",
                cfg.method,
                "rollout: async trains the full model (method: full); LoRA adapters are "
                "not pushed to the replicas. Set --method full or use --rollout sync",
            )
        )
    if cfg.weight_swap == "rolling" and cfg.learner_ranks > 1:
        problems.append(
            (
                "weight_swap",
                cfg.weight_swap,
                "weight_swap: rolling pushes to one replica at a time from one learner; "
                "with learner_ranks > 1 the other ranks send their rows of a version to "
                "every replica in one push, which a replica-by-replica order would "
                "stall. Use --weight-swap barrier or --learner-ranks 1",
            )
        )
    if cfg.lr_scheduler not in ASYNC_SCHEDULERS:
        problems.append(
            (
                "lr_scheduler",
                cfg.lr_scheduler,
                f"the async learner runs the schedules {', '.join(ASYNC_SCHEDULERS)}; "
                "pick one of them",
            )
        )
    problems += _batch_problems(cfg)
    if cfg.placement == "colocated":
        problems += _colocation_problems(cfg)
    return problems


def _batch_problems(cfg: AsyncCard) -> list[Problem]:
    batch = cfg.batch_size * cfg.grad_accum
    if batch < cfg.learner_ranks:
        return [
            (
                "learner_ranks",
                cfg.learner_ranks,
                f"learner_ranks {cfg.learner_ranks} need at least that many completions "
                f"a step; batch_size x grad_accum is {batch}. Raise --batch-size or lower "
                "--learner-ranks",
            )
        ]
    if batch // cfg.ppo_minibatches < cfg.learner_ranks:
        return [
            (
                "ppo_minibatches",
                cfg.ppo_minibatches,
                f"{cfg.ppo_minibatches} minibatches of a {batch}-completion batch leave "
                f"fewer completions than the {cfg.learner_ranks} learner rank(s) need "
                "each; lower --ppo-minibatches or raise --batch-size / --grad-accum",
            )
        ]
    return []


def _colocation_problems(cfg: AsyncCard) -> list[Problem]:
    """placement: colocated seats one learner rank and one replica on one GPU, and
    pushes through vLLM's CUDA IPC engine (trainers/weight_sync/ipc.py)."""
    problems: list[Problem] = []
    why = "placement: colocated puts the learner and its replica on one GPU"
    if cfg.replicas != 1:
        problems.append(
            (
                "replicas",
                cfg.replicas,
                f"{why}, so it has exactly one replica; set --replicas 1, or "
                "--placement separate for a GPU a replica",
            )
        )
    if cfg.learner_ranks != 1:
        problems.append(
            (
                "learner_ranks",
                cfg.learner_ranks,
                f"{why}, so the learner is one rank; set --learner-ranks 1, or "
                "--placement separate",
            )
        )
    if cfg.device == "cpu":
        problems.append(
            (
                "device",
                cfg.device,
                f"{why}; device: cpu asks for none. Set --device cuda (or auto on a GPU "
                "host), or --placement separate",
            )
        )
    if cfg.weight_sync != "nccl":
        problems.append(
            (
                "weight_sync",
                cfg.weight_sync,
                f"{why} and pushes through vLLM's CUDA IPC engine, the GPU path the job "
                "takes for weight_sync: nccl when the learner shares the replica's GPU; "
                "set --weight-sync nccl",
            )
        )
    if cfg.weight_swap != "barrier":
        problems.append(
            (
                "weight_swap",
                cfg.weight_swap,
                f"{why}: there is no other replica to keep generating during a push; "
                "set --weight-swap barrier",
            )
        )
    return problems
