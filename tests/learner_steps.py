"""The async learner's step taken by one process and by sharded learner ranks on the same
batch (tests/async_rl/test_sharded_learner.py on CPU, tests/gpu/test_gpu_fsdp2.py on
GPUs), and the on-policy samples both take it on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trainers.async_rl.learner import Learner, LearnerSettings, Sample, StepStats
from trainers.async_rl.protocols import Followers
from trainers.async_rl.rank_workers import start_rank_processes
from trainers.async_rl.sharded import RANK_TIMEOUT_S, RankSpec, ShardedLearner

PROMPT = [1, 42, 7, 99]
COMPLETIONS = [[5, 6, 7], [8, 9], [10, 11, 12], [13]]


def on_policy(learner: Learner, advantages: list[float]) -> list[Sample]:
    """Samples whose behaviour log-probs are the learner's own (as a replica holding the
    same weights would report them)."""
    blank = [Sample(PROMPT, c, [0.0] * len(c), 0.0) for c in COMPLETIONS]
    with torch.no_grad():
        flat = learner.token_logprobs(blank).cpu().tolist()
    out, i = [], 0
    for c, a in zip(COMPLETIONS, advantages, strict=True):
        out.append(Sample(PROMPT, c, flat[i : i + len(c)], a))
        i += len(c)
    return out


@dataclass
class BothSteps:
    expected: StepStats  # one process
    got: StepStats  # the sharded ranks
    single: dict[str, torch.Tensor]  # one process's weights after its step (on the CPU)
    before: dict[str, torch.Tensor]  # the weights both started from
    whole: dict[str, torch.Tensor]  # the ranks' weights after theirs, gathered
    # Each weight's name, whole shape, and the shape and device of rank 0's rows of it.
    shards: list[tuple[str, tuple[int, ...], tuple[int, ...], str]]
    followers: list[dict[str, Any]]  # where each follower rank ran (rank_workers.py)


def step_both(
    checkpoint: Path,
    work_dir: Path,
    settings: LearnerSettings,
    device: str,
    ranks: int = 2,
    spec: RankSpec | None = None,
    start_followers: Callable[[RankSpec], Followers] = start_rank_processes,
    then: Callable[[ShardedLearner, list[Sample]], None] | None = None,
    rank_timeout_s: float = RANK_TIMEOUT_S,
) -> BothSteps:
    """One learner on `device` and `ranks` FSDP2 ranks (sharded.py) each take one step on
    the same on-policy batch, the single learner loaded as each rank loads it; `spec`:
    the ranks' own (as a card's job makes it), else one on loopback; `start_followers`:
    the followers as processes (no Ray) or actors (rank_workers.py); `then`: called with
    the ranks and the batch after the steps, before the ranks stop; `rank_timeout_s`: the
    default spec's wait for a silent rank in a collective."""
    from podium.models.vllm_launch import free_port
    from trainers.runtime import load_model
    from trainers.weight_sync import make_weight_sync

    model = load_model(checkpoint, device).to(device)
    single = Learner(model, settings)
    samples = on_policy(single, [1.0, -1.0, 0.5, -0.5])
    before = {name: value.detach().cpu().clone() for name, value in model.state_dict().items()}
    spec = spec or RankSpec(
        checkpoint=str(checkpoint),
        ranks=ranks,
        host="127.0.0.1",
        group_port=free_port(),
        sync_backend="gloo",
        sync_port=free_port(),
        work_dir=str(work_dir),
        settings=settings,
        pad_token_id=0,
        seed=0,
        device=device,
        rank_timeout_s=rank_timeout_s,
    )
    store = make_weight_sync(  # rank 0 hosts the store the followers' syncs join
        spec.sync_backend,
        learner_ranks=spec.ranks,
        rank=0,
        work_dir=work_dir,
        address=(spec.host, spec.sync_port),
    )
    sharded = ShardedLearner(spec, print, start_followers)
    try:
        shards = []
        for name, tensor in sharded.named_tensors():
            local = tensor.to_local()  # type: ignore[attr-defined]
            shards.append((name, tuple(tensor.shape), tuple(local.shape), local.device.type))
        expected = single.step(samples)
        got = sharded.step(samples)
        whole = sharded.full_model().state_dict()
        if then is not None:
            then(sharded, samples)
    finally:
        sharded.close()
        store.close()
    after = {name: value.detach().cpu() for name, value in model.state_dict().items()}
    return BothSteps(expected, got, after, before, whole, shards, sharded.followers.where)
