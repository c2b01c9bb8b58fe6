"""The sharded async learner on GPUs (`make test-gpu`): 2 ranks, FSDP2 (`fully_shard`)
over NCCL, rank r on GPU r (trainers/async_rl/sharded.py, RankSpec.device "cuda"), take
the step one learner takes on the same batch: the same loss, clip fraction, tokens and
weights within tolerance, each rank holding only its rows, on its GPU. Skipped with the
reason where fewer than 2 GPUs exist; in a rehearsal (PODIUM_GPU_REHEARSAL=1) the same
body runs on CPU over gloo."""

from __future__ import annotations

from pathlib import Path

import pytest
from learner_steps import step_both

from trainers.async_rl.learner import LearnerSettings
from trainers.weight_sync.vllm_extension import row_slices

pytestmark = pytest.mark.gpu

# Two minibatches over two epochs, one sample a forward pass: four optimizer steps, so the
# policy moves within the batch and the clip acts.
SETTINGS = LearnerSettings(
    learning_rate=1e-2, temperature=0.7, minibatches=2, epochs=2, micro_batch=1
)


def test_two_fsdp2_ranks_step_like_one_learner(
    tiny_checkpoint: Path, gpu_device: str, tmp_path: Path
) -> None:
    import torch

    if gpu_device == "cuda" and (count := torch.cuda.device_count()) < 2:
        pytest.skip(f"needs 2 GPUs for 2 FSDP2 learner ranks; {count} visible")
    both = step_both(tiny_checkpoint, tmp_path, SETTINGS, gpu_device)

    for name, whole, local, device in both.shards:
        start, stop = row_slices(whole, 2)[0]
        assert local[0] == stop - start and device == gpu_device, name
    # float32 on both (load_model); NCCL and gloo sum in another order than one process.
    loss_tol, weight_tol = (1e-5, 2e-5) if gpu_device == "cpu" else (1e-4, 1e-4)
    got, expected = both.got, both.expected
    assert got.tokens == expected.tokens
    assert abs(got.loss - expected.loss) < loss_tol, (got, expected)
    assert abs(got.is_weight_mean - expected.is_weight_mean) < loss_tol
    assert expected.clip_fraction > 0 and abs(got.clip_fraction - expected.clip_fraction) < 1e-6
    for name, value in both.single.items():
        assert torch.allclose(both.whole[name], value, atol=weight_tol, rtol=0), name
    assert any(not torch.equal(v, both.before[n]) for n, v in both.single.items())
