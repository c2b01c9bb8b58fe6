"""The async learner: one GRPO step on samples the replicas made, corrected for staleness.

Each sample carries the log-probs of the weights that generated it (the *behaviour*
policy, `--logprobs-mode processed_logprobs`: after temperature, as the learner
computes them). The loss is written as AReaL's decoupled PPO objective with GRPO's
group-normalised advantages:

    prox  = log-probs under the learner's weights before this step (no grad)
    w     = min(exp(prox - behaviour), is_cap)          truncated IS weight, detached
    r     = exp(logp - prox)                            PPO ratio against the proximal
    loss  = -mean_tokens( w * min(r * A, clip(r, 1-eps, 1+eps) * A) )

but the learner takes ONE optimizer step per batch, so the proximal policy is the
learner itself at the forward pass: r is exactly 1, the clip never acts, and the update
is truncated-importance-sampling REINFORCE with GRPO's advantages,

    gradient = -mean_tokens( w * A * grad logp )

(tests/async_rl/test_learner.py checks the gradients are equal). Staleness
(behaviour != proximal) re-weights the update through w; nothing bounds how far one
step moves the policy but the learning rate. The clip (and `clip_eps`) would only act
with several optimizer steps (minibatches or epochs) per batch, which this learner does
not take. On-policy samples have w = 1: the loss is plain GRPO without KL. Token
log-probs come from TRL's `selective_log_softmax` (the same piece TRL's GRPOTrainer
uses) over logits divided by the sampling temperature.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Sample:
    """One completion to learn from: token ids and what the replica said about them."""

    prompt_ids: list[int]
    completion_ids: list[int]
    behaviour_logprobs: list[float]  # one per completion token, after temperature
    advantage: float


@dataclass(frozen=True)
class StepStats:
    loss: float
    is_weight_mean: float  # mean truncated importance weight over completion tokens
    is_truncated: float  # share of tokens whose weight hit is_cap
    behaviour_kl: float  # mean (prox - behaviour): how far the samples' policy drifted
    tokens: int


def group_advantages(rewards: Sequence[float], group_size: int) -> list[float]:
    """GRPO: each reward minus its group's mean, over the group's std (+1e-4, as TRL)."""
    if len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    values = torch.tensor(list(rewards), dtype=torch.float64).view(-1, group_size)
    mean = values.mean(dim=1, keepdim=True)
    std = values.std(dim=1, keepdim=True) if group_size > 1 else torch.zeros_like(mean)
    return [float(a) for a in ((values - mean) / (std + 1e-4)).flatten()]


@dataclass(frozen=True)
class Batch:
    """A step's inputs, all on one device (the model's)."""

    ids: torch.Tensor  # right-padded prompt + completion ids
    attention: torch.Tensor
    targets: torch.Tensor  # completion tokens among the shifted positions
    behaviour: torch.Tensor  # flat, float32, one per completion token
    advantages: torch.Tensor  # flat, float32, each sample's advantage per token


def build_batch(samples: Sequence[Sample], pad_token_id: int, device: torch.device | str) -> Batch:
    """The tensors a step needs, built on `device`: a model on a GPU cannot read CPU
    tensors (its first step failed with "Expected all tensors to be on the same device")."""
    seqs = [s.prompt_ids + s.completion_ids for s in samples]
    width = max(len(x) for x in seqs)
    ids = torch.full((len(seqs), width), pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    targets = torch.zeros((len(seqs), width - 1), dtype=torch.bool)
    for i, (s, seq) in enumerate(zip(samples, seqs, strict=True)):
        ids[i, : len(seq)] = torch.tensor(seq)
        attention[i, : len(seq)] = 1
        # Position t predicts token t+1: completion tokens are predicted from
        # positions len(prompt)-1 .. len(seq)-2.
        targets[i, len(s.prompt_ids) - 1 : len(seq) - 1] = True
    behaviour = torch.tensor(
        [lp for s in samples for lp in s.behaviour_logprobs], dtype=torch.float32
    )
    advantages = torch.tensor(
        [s.advantage for s in samples for _ in s.completion_ids], dtype=torch.float32
    )
    # Built on the CPU and copied once (non_blocking): element-wise writes into a GPU
    # tensor would be one small copy each.
    return Batch(
        *(t.to(device, non_blocking=True) for t in (ids, attention, targets, behaviour, advantages))
    )


class Learner:
    """A causal LM, its optimizer, and the GRPO step (truncated-IS REINFORCE: one
    optimizer step a batch, so the PPO clip written in the loss never acts)."""

    def __init__(
        self,
        model: Any,
        *,
        learning_rate: float,
        temperature: float = 1.0,
        clip_eps: float = 0.2,
        is_cap: float = 2.0,
        pad_token_id: int = 0,
        ranks: int = 1,
    ) -> None:
        self.model = model
        self.ranks = ranks  # > 1: one of the learner ranks of sharded.py
        self.temperature = temperature
        self.clip_eps = clip_eps
        self.is_cap = is_cap
        self.pad_token_id = pad_token_id
        self.optimizer = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad], lr=learning_rate
        )
        self.steps = 0

    @property
    def device(self) -> torch.device:
        """Where the model's weights live: every input of a step is built there."""
        device: torch.device = next(self.model.parameters()).device
        return device

    def token_logprobs(self, samples: Sequence[Sample]) -> torch.Tensor:
        """Log-probs of every completion token (flat, in sample order), with grad."""
        from trl.trainer.utils import selective_log_softmax

        batch = build_batch(samples, self.pad_token_id, self.device)
        logits = self.model(input_ids=batch.ids, attention_mask=batch.attention).logits
        logps = selective_log_softmax(logits[:, :-1, :] / self.temperature, batch.ids[:, 1:])
        # float32 whatever the model's dtype: the ratios below compare these with the
        # replica's float32 log-probs.
        flat: torch.Tensor = logps[batch.targets].float()
        return flat

    def step(self, samples: Sequence[Sample], total_tokens: int | None = None) -> StepStats:
        """One optimizer step on `samples`; the weights move to the next version.

        With learner ranks (`ranks` > 1, an FSDP2-sharded model) each rank
        passes its share of the batch and `total_tokens`, the batch's completion tokens
        over all ranks: the loss is scaled so that FSDP's gradient average equals the
        gradient of one process's token mean over the whole batch, and the reported
        stats are summed over the ranks."""
        if not samples:
            raise ValueError("a learner step needs samples")
        for s in samples:
            if len(s.behaviour_logprobs) != len(s.completion_ids) or not s.completion_ids:
                raise ValueError(
                    f"a sample has {len(s.completion_ids)} completion tokens and "
                    f"{len(s.behaviour_logprobs)} behaviour log-probs: the replica must "
                    "return one processed log-prob per generated token"
                )
        batch = build_batch(samples, self.pad_token_id, self.device)
        behaviour, advantages = batch.behaviour, batch.advantages
        world = self.ranks
        self.model.train()
        logps = self.token_logprobs(samples)
        total = total_tokens if total_tokens is not None else int(logps.numel())
        prox = logps.detach()  # one step per batch: the forward pass *is* the proximal
        weight_raw = torch.exp(prox - behaviour)
        weight = weight_raw.clamp(max=self.is_cap)
        ratio = torch.exp(logps - prox)
        clipped = ratio.clamp(1 - self.clip_eps, 1 + self.clip_eps)
        per_token = weight * torch.min(ratio * advantages, clipped * advantages)
        loss = -per_token.sum() * world / total
        self.optimizer.zero_grad(set_to_none=True)
        torch.autograd.backward(loss)  # loss.backward() itself is untyped in torch
        self.optimizer.step()
        self.steps += 1
        sums = torch.stack(
            [
                per_token.detach().sum(),
                weight.sum(),
                (weight_raw > self.is_cap).float().sum(),
                (prox - behaviour).sum(),
            ]
        ).to(torch.float64)
        if world > 1:
            torch.distributed.all_reduce(sums)
        return StepStats(
            loss=float(-sums[0] / total),
            is_weight_mean=float(sums[1] / total),
            is_truncated=float(sums[2] / total),
            behaviour_kl=float(sums[3] / total),
            tokens=total,
        )

    def named_tensors(self) -> Iterator[tuple[str, torch.Tensor]]:
        """The weights to push, named as the HF checkpoint names them (vLLM loads those).

        A tied LM head is the embedding itself: vLLM skips `lm_head.weight` then, so it
        is not sent (SmolLM2-135M: 113 of 651 MB a replica)."""
        tied = bool(getattr(self.model.config, "tie_word_embeddings", False))
        for name, tensor in self.model.state_dict().items():
            if tied and name == "lm_head.weight":
                continue
            yield name, tensor.detach()

    # A single learner process: the hooks ShardedLearner (sharded.py) fills for its ranks.

    def connect(self, endpoints: Sequence[tuple[int, str]]) -> None:
        """Other learner ranks join the replicas' transfer groups (there are none)."""

    def announce_push(self, version: int) -> None:
        """Other learner ranks start pushing their rows of `version` (there are none)."""

    def announce_replica(self, index: int, base_url: str, version: int) -> None:
        """Other learner ranks send a new replica their rows (there are none)."""

    def full_model(self) -> Any:
        """The model with whole weights, to save as a checkpoint."""
        return self.model

    def close(self) -> None:
        """Stop the other learner ranks (there are none)."""
