"""Learner ranks: two processes with FSDP2-sharded parameters (real gloo, the tiny
model) take the same step as one process does on the same batch."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from learner_steps import step_both

from trainers.async_rl.learner import LearnerSettings
from trainers.weight_sync.checksum import row_slices

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
    both = step_both(tiny_checkpoint, tmp_path, settings, "cpu")
    # Each rank holds only its rows of every weight.
    for name, whole, local, _ in both.shards:
        start, stop = row_slices(whole, 2)[0]
        assert local[0] == stop - start, name

    got, expected = both.got, both.expected
    assert abs(got.loss - expected.loss) < 1e-5 and got.tokens == expected.tokens
    assert abs(got.is_weight_mean - expected.is_weight_mean) < 1e-5
    assert abs(got.clip_fraction - expected.clip_fraction) < 1e-6
    moved = 0
    for name, value in both.single.items():
        # AdamW moves each weight by ~lr (1e-2); float sums in another order differ ~1e-6.
        assert torch.allclose(both.whole[name], value, atol=2e-5, rtol=0), name
        moved += int(not torch.equal(value, both.before[name]))
    assert moved  # the step changed the weights (so equality is not of two untouched models)
