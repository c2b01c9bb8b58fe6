"""The async learner: GRPO steps on samples the replicas made, corrected for staleness.

Each sample carries the log-probs of the weights that generated it (the *behaviour*
policy, `--logprobs-mode processed_logprobs`: after temperature, as the learner
computes them). The loss is AReaL's decoupled PPO objective with GRPO's
group-normalised advantages, plus an optional KL penalty against a reference model:

    prox  = log-probs under the learner's weights before this batch (no grad)
    w     = min(exp(prox - behaviour), is_cap)          truncated IS weight, detached
    r     = exp(logp - prox)                            PPO ratio against the proximal
    kl    = exp(ref - logp) - (ref - logp) - 1          k3 estimate, >= 0 (beta > 0 only)
    loss  = -mean_tokens( w * min(r * A, clip(r, 1-eps, 1+eps) * A) - beta * kl )

A batch is cut into `minibatches` (and passed over `epochs` times): one optimizer step
each, so after the first the policy has moved away from the proximal, r leaves 1 and
the clip acts (`clip_fraction` says on how many tokens). With one minibatch and one
epoch r is exactly 1 and the update is truncated-importance-sampling REINFORCE with
GRPO's advantages (tests/async_rl/test_learner.py checks the gradients are equal). Each
minibatch is run in micro-batches of `micro_batch` samples whose gradients accumulate
(activation memory is one micro-batch's). The learning rate follows the card's
transformers schedule and warm-up over every optimizer step of the run.

`behaviour_kl` is KL(behaviour || proximal), estimated on the behaviour's own samples
with the k3 estimator exp(d) - d - 1, d = prox - behaviour: every term is >= 0, so a
negative value is a bug, not noise. Token log-probs come from TRL's
`selective_log_softmax` (the piece TRL's GRPOTrainer uses) over logits divided by the
sampling temperature.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch

from trainers.config import ASYNC_SCHEDULERS

T = TypeVar("T")


@dataclass(frozen=True)
class Sample:
    """One completion to learn from: token ids and what the replica said about them."""

    prompt_ids: list[int]
    completion_ids: list[int]
    behaviour_logprobs: list[float]  # one per completion token, after temperature
    advantage: float


@dataclass(frozen=True)
class LearnerSettings:
    """How the learner updates: the card's fields (plain values: a follower rank gets
    them as JSON in its RankSpec)."""

    learning_rate: float
    temperature: float = 1.0
    clip_eps: float = 0.2
    is_cap: float = 2.0
    minibatches: int = 1  # optimizer steps per batch (and per epoch)
    epochs: int = 1  # passes over each batch
    micro_batch: int | None = None  # samples per forward pass; None: a whole minibatch
    beta: float = 0.0  # KL penalty against the reference model
    lr_scheduler: str = "constant"
    warmup_steps: int = 0  # optimizer steps
    total_steps: int = 1  # batches in the run: the schedule spans total_steps x updates

    @property
    def updates_per_batch(self) -> int:
        return self.minibatches * self.epochs


@dataclass(frozen=True)
class StepStats:
    loss: float  # mean over the batch's optimizer steps
    is_weight_mean: float  # mean truncated importance weight over completion tokens
    is_truncated: float  # share of tokens whose weight hit is_cap
    behaviour_kl: float  # KL(behaviour || proximal), k3 estimate: >= 0 by construction
    tokens: int
    clip_fraction: float = 0.0  # share of token updates the PPO clip held back
    ref_kl: float | None = None  # mean k3 KL to the reference model (beta > 0)
    learning_rate: float = 0.0  # at the batch's first optimizer step


def group_advantages(rewards: Sequence[float], group_size: int) -> list[float]:
    """GRPO: each reward minus its group's mean, over the group's std (+1e-4, as TRL)."""
    if len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    values = torch.tensor(list(rewards), dtype=torch.float64).view(-1, group_size)
    mean = values.mean(dim=1, keepdim=True)
    std = values.std(dim=1, keepdim=True) if group_size > 1 else torch.zeros_like(mean)
    return [float(a) for a in ((values - mean) / (std + 1e-4)).flatten()]


def k3(log_ratio: torch.Tensor) -> torch.Tensor:
    """Per-token KL(q || p) estimated from samples of q, with log_ratio = log p - log q:
    exp(d) - d - 1, unbiased and never negative (Schulman's k3, as TRL's `beta` uses)."""
    return torch.expm1(log_ratio) - log_ratio


def share(samples: Sequence[T], ranks: int, rank: int) -> list[T]:
    """Rank `rank`'s part of a (mini)batch: every rank gets at least one sample when it
    has at least `ranks`, which the card check requires of every minibatch."""
    return list(samples[rank::ranks])


def cut(items: Sequence[T], parts: int) -> list[list[T]]:
    """`parts` consecutive runs of `items` whose sizes differ by at most one."""
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        out.append(list(items[start:stop]))
        start = stop
    return out


def micro_batches(
    minibatch: Sequence[Sample], micro_batch: int | None, ranks: int, rank: int
) -> list[list[Sample]]:
    """This rank's forward passes over `minibatch`. Every rank makes the same number of
    them (each pass of a sharded model is a collective: one rank with a pass more would
    wait for ever), so the count comes from the smallest rank share."""
    mine = share(minibatch, ranks, rank)
    smallest = len(minibatch) // ranks
    if smallest < 1:
        raise ValueError(
            f"a minibatch of {len(minibatch)} samples cannot feed {ranks} learner ranks: "
            "use fewer minibatches or ranks, or a larger batch"
        )
    passes = 1 if micro_batch is None else max(1, -(-smallest // micro_batch))
    return cut(mine, min(passes, smallest))


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
    """A causal LM, its optimizer and LR schedule, and the GRPO update of a batch (one
    rank of `ranks` when sharded: each rank passes its share of every minibatch)."""

    def __init__(
        self,
        model: Any,
        settings: LearnerSettings,
        *,
        pad_token_id: int = 0,
        ranks: int = 1,
        rank: int = 0,
        reference: Any = None,
    ) -> None:
        from transformers import get_scheduler

        if settings.beta > 0 and reference is None:
            raise ValueError("beta > 0 needs a reference model to measure the KL against")
        if settings.lr_scheduler not in ASYNC_SCHEDULERS:
            raise ValueError(
                f"lr_scheduler {settings.lr_scheduler!r} is not one the async learner "
                f"runs; use one of {', '.join(ASYNC_SCHEDULERS)}"
            )
        self.model = model
        self.settings = settings
        self.ranks, self.rank = ranks, rank  # ranks > 1: one of the ranks of sharded.py
        self.pad_token_id = pad_token_id
        self.reference = reference.eval().requires_grad_(False) if reference else None
        self.optimizer = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate
        )
        self.scheduler = get_scheduler(
            settings.lr_scheduler,
            self.optimizer,
            num_warmup_steps=settings.warmup_steps,
            num_training_steps=settings.total_steps * settings.updates_per_batch,
        )
        self.steps = 0

    @property
    def device(self) -> torch.device:
        """Where the model's weights live: every input of a step is built there."""
        device: torch.device = next(self.model.parameters()).device
        return device

    @property
    def is_cap(self) -> float:
        return self.settings.is_cap

    def _logprobs(self, model: Any, batch: Batch) -> torch.Tensor:
        from trl.trainer.utils import selective_log_softmax

        logits = model(input_ids=batch.ids, attention_mask=batch.attention).logits
        logps = selective_log_softmax(
            logits[:, :-1, :] / self.settings.temperature, batch.ids[:, 1:]
        )
        # float32 whatever the model's dtype: the ratios below compare these with the
        # replica's float32 log-probs.
        flat: torch.Tensor = logps[batch.targets].float()
        return flat

    def token_logprobs(self, samples: Sequence[Sample]) -> torch.Tensor:
        """Log-probs of every completion token (flat, in sample order), with grad."""
        return self._logprobs(self.model, build_batch(samples, self.pad_token_id, self.device))

    def step(self, samples: Sequence[Sample]) -> StepStats:
        """The batch's optimizer steps (minibatches x epochs); the weights move to the
        next version.

        Every rank is given the whole batch and trains on its share of each minibatch;
        the loss is scaled so that FSDP's gradient average equals the gradient of one
        process's token mean over the minibatch, and the stats are summed over ranks."""
        if not samples:
            raise ValueError("a learner step needs samples")
        for s in samples:
            if len(s.behaviour_logprobs) != len(s.completion_ids) or not s.completion_ids:
                raise ValueError(
                    f"a sample has {len(s.completion_ids)} completion tokens and "
                    f"{len(s.behaviour_logprobs)} behaviour log-probs: the replica must "
                    "return one processed log-prob per generated token"
                )
        cfg = self.settings
        minibatches = [list(samples[m :: cfg.minibatches]) for m in range(cfg.minibatches)]
        passes = [micro_batches(mb, cfg.micro_batch, self.ranks, self.rank) for mb in minibatches]
        tokens = [sum(len(s.completion_ids) for s in mb) for mb in minibatches]
        batches = [[build_batch(p, self.pad_token_id, self.device) for p in mb] for mb in passes]
        self.model.train()
        with torch.no_grad():
            # The proximal policy is the weights before this batch. With one update a
            # batch it is the forward pass itself (no pass more); otherwise it is fixed
            # here, before any update moves the weights.
            prox = (
                None
                if cfg.updates_per_batch == 1
                else [[self._logprobs(self.model, b) for b in mb] for mb in batches]
            )
            ref = (
                [[self._logprobs(self.reference, b) for b in mb] for mb in batches]
                if self.reference is not None
                else None
            )
        # loss, IS weight, truncated, behaviour KL, clipped token updates, reference KL
        sums = torch.zeros(6, dtype=torch.float64)
        learning_rate = float(self.optimizer.param_groups[0]["lr"])
        for epoch in range(cfg.epochs):
            for m, mb in enumerate(batches):
                self.optimizer.zero_grad(set_to_none=True)
                for i, batch in enumerate(mb):
                    logps = self._logprobs(self.model, batch)
                    old = logps.detach() if prox is None else prox[m][i]
                    weight_raw = torch.exp(old - batch.behaviour)
                    weight = weight_raw.clamp(max=cfg.is_cap)
                    adv = batch.advantages
                    ratio = torch.exp(logps - old)
                    clipped = ratio.clamp(1 - cfg.clip_eps, 1 + cfg.clip_eps)
                    per_token = weight * torch.min(ratio * adv, clipped * adv)
                    if ref is not None:
                        kl = k3(ref[m][i] - logps)
                        per_token = per_token - cfg.beta * kl
                        if epoch == 0:
                            sums[5] += float(kl.detach().sum())
                    loss = -per_token.sum() * self.ranks / tokens[m]
                    torch.autograd.backward(loss)  # loss.backward() itself is untyped
                    held = ((ratio < 1 - cfg.clip_eps) & (adv < 0)) | (
                        (ratio > 1 + cfg.clip_eps) & (adv > 0)
                    )
                    sums[0] += float(-per_token.detach().sum()) / tokens[m]
                    sums[4] += float(held.sum())
                    if epoch == 0:  # about the samples, not the updates: counted once
                        sums[1] += float(weight.sum())
                        sums[2] += float((weight_raw > cfg.is_cap).sum())
                        sums[3] += float(k3(old - batch.behaviour).sum())
                self.optimizer.step()
                self.scheduler.step()
        self.steps += 1
        if self.ranks > 1:
            torch.distributed.all_reduce(sums)
        total = sum(tokens)
        return StepStats(
            loss=float(sums[0]) / cfg.updates_per_batch,
            is_weight_mean=float(sums[1]) / total,
            is_truncated=float(sums[2]) / total,
            behaviour_kl=float(sums[3]) / total,
            tokens=total,
            clip_fraction=float(sums[4]) / (total * cfg.epochs),
            ref_kl=float(sums[5]) / total if ref is not None else None,
            learning_rate=learning_rate,
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

    def check(self) -> None:
        """A learner in this process is lost only with the job."""

    def close(self) -> None:
        """Stop the other learner ranks (there are none)."""
