"""Learner ranks: two processes with FSDP2-sharded parameters (real gloo, the tiny
model) take the same step as one process does on the same batch."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_learner import on_policy

from trainers.async_rl.learner import Learner, LearnerSettings
from trainers.async_rl.sharded import RankSpec, ShardedLearner
from trainers.weight_sync import make_weight_sync
from trainers.weight_sync.vllm_extension import row_slices

# One update a batch; and two minibatches over two epochs in forward passes of one sample
# (four optimizer steps, the clip acting, each rank's passes counted alike).
SETTINGS = [
    LearnerSettings(learning_rate=1e-2, temperature=0.7),
    LearnerSettings(learning_rate=1e-2, temperature=0.7, minibatches=2, epochs=2, micro_batch=1),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=["one-update", "minibatches"])
def test_two_sharded_ranks_step_like_one_process(
    settings: LearnerSettings, tiny_checkpoint: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    from podium.models.vllm_launch import free_port

    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.float32)
    single = Learner(model, settings)
    samples = on_policy(single, [1.0, -1.0, 0.5, -0.5])
    before = {name: value.clone() for name, value in model.state_dict().items()}
    spec = RankSpec(
        checkpoint=str(tiny_checkpoint),
        ranks=2,
        host="127.0.0.1",
        group_port=free_port(),
        sync_backend="gloo",
        sync_port=free_port(),
        work_dir=str(tmp_path),
        settings=settings,
        pad_token_id=0,
        seed=0,
    )
    store = make_weight_sync(  # rank 0 hosts the store the follower's sync joins
        "gloo", learner_ranks=2, rank=0, work_dir=tmp_path, address=(spec.host, spec.sync_port)
    )
    sharded = ShardedLearner(spec, log=print)
    try:
        # Each rank holds only its rows of every weight.
        for name, tensor in sharded.named_tensors():
            local = tensor.to_local()  # type: ignore[attr-defined]
            start, stop = row_slices(tuple(tensor.shape), 2)[0]
            assert local.shape[0] == stop - start, name

        expected = single.step(samples)
        got = sharded.step(samples)
        whole = sharded.full_model().state_dict()
    finally:
        sharded.close()
        store.close()

    assert abs(got.loss - expected.loss) < 1e-5 and got.tokens == expected.tokens
    assert abs(got.is_weight_mean - expected.is_weight_mean) < 1e-5
    assert abs(got.clip_fraction - expected.clip_fraction) < 1e-6
    moved = 0
    for name, value in single.model.state_dict().items():
        # AdamW moves each weight by ~lr (1e-2); float sums in another order differ ~1e-6.
        assert torch.allclose(whole[name], value, atol=2e-5, rtol=0), name
        moved += int(not torch.equal(value, before[name]))
    assert moved  # the step changed the weights (so equality is not of two untouched models)
