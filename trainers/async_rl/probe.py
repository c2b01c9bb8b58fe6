"""What an engine serves, checked against the learner: the log-probs of fixed tokens.

A push's checksum says the engine was handed the learner's bytes; this says it computes
with them. The replica scores `PROBE_TOKENS` as a prompt (`prompt_logprobs`: one
forward pass, nothing sampled) and the learner scores the same tokens; the largest
difference is the train/inference mismatch (dtype, kernels), apart from staleness, which
the version says. Both sides at temperature 1: vLLM's prompt log-probs are the model's
own, before any sampling parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from podium.errors import PodiumError
from trainers.weight_sync import ReplicaEndpoint

# Fixed, in the vocabulary of any tokenizer Podium trains (ids below 1000), none special.
PROBE_TOKENS = [504, 3458, 282, 260, 2117, 314, 3226, 30, 378, 253, 1789, 28, 198, 1467]


@dataclass(frozen=True)
class Probe:
    engine: list[float]
    learner: list[float]

    @property
    def mismatch(self) -> float:
        """The largest |engine - learner| log-prob over the probe's tokens."""
        return max(abs(a - b) for a, b in zip(self.engine, self.learner, strict=True))


def engine_logprobs(replica: ReplicaEndpoint, model: str, tokens: list[int]) -> list[float]:
    """The replica's log-prob of each of `tokens` after the ones before it."""
    body = {"model": model, "prompt": [tokens], "max_tokens": 1, "prompt_logprobs": 0}
    resp = httpx.post(replica.root + "/v1/completions", json=body, timeout=120)
    if resp.status_code != 200:
        raise PodiumError(
            f"replica {replica.index}: the log-prob probe answered {resp.status_code}: "
            f"{resp.text[:300]}"
        )
    scored: list[dict[str, Any] | None] = resp.json()["choices"][0]["prompt_logprobs"]
    # Position 0 has nothing before it (None); each other holds at least its own token.
    pairs = zip(tokens[1:], scored[1:], strict=True)
    return [float(entry[str(tok)]["logprob"]) for tok, entry in pairs if entry]


def learner_logprobs(model: Any, tokens: list[int]) -> list[float]:
    """The learner's log-prob of each of `tokens` after the ones before it (float32)."""
    import torch

    ids = torch.tensor([tokens], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1].float()
    picked = logits.log_softmax(-1).gather(1, ids[0, 1:, None]).squeeze(1)
    return [float(x) for x in picked.cpu()]


def probe(replica: ReplicaEndpoint, model_name: str, learner_model: Any) -> Probe:
    return Probe(
        engine_logprobs(replica, model_name, PROBE_TOKENS),
        learner_logprobs(learner_model, PROBE_TOKENS),
    )
