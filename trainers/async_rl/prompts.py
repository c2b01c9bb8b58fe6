"""The async run's prompts and rewards: the card's prompts as the learner tokenises them,
and its reward rules summed with their weights (TRL's calling convention), scored on
the replicas' threads, outside the learner."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from trainers.config import GrpoConfig
from trainers.data import TrainingData, fit_prompts, grpo_dataset
from trainers.rewards import RewardFn


@dataclass(frozen=True)
class Prompt:
    id: str
    messages: list[dict[str, str]]
    answer: str
    metadata: str
    ids: list[int]


def load_prompts(cfg: GrpoConfig, data: TrainingData, tokenizer: Any) -> tuple[list[Prompt], int]:
    """The card's prompts, chat-formatted and tokenised as the learner sees them; those
    longer than max_length - max_completion_length are left out (and counted), as the
    sync path does."""
    train, too_long = fit_prompts(
        grpo_dataset(data.train), tokenizer, cfg.max_length - cfg.max_completion_length
    )
    prompts: list[Prompt] = []
    for row in train:
        ids = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        prompts.append(
            Prompt(
                id=str(row.get("id") or len(prompts)),
                messages=[{"role": m["role"], "content": m["content"]} for m in row["prompt"]],
                answer=str(row.get("answer") or ""),
                metadata=str(row.get("metadata") or ""),
                ids=list(ids),
            )
        )
    return prompts, too_long


@dataclass
class Scorer:
    """The card's reward rules, summed with their weights (TRL's calling convention)."""

    funcs: list[RewardFn]
    weights: list[float]

    def score(self, prompt: Prompt, texts: list[str]) -> tuple[list[float], dict[str, float]]:
        n = len(texts)
        completions = [[{"role": "assistant", "content": t}] for t in texts]
        total = [0.0] * n
        means: dict[str, float] = {}
        for fn, weight in zip(self.funcs, self.weights, strict=True):
            values = fn(
                [prompt.messages] * n,
                completions,
                answer=[prompt.answer] * n,
                metadata=[prompt.metadata] * n,
            )
            means[f"rewards/{fn.__name__}/mean"] = statistics.fmean(values)
            total = [t + weight * v for t, v in zip(total, values, strict=True)]
        return total, means
