"""The sharded async learner on GPUs (`make test-gpu`): a card's `learner_ranks: 2` with
`device: cuda` (accepted by the card and this host's check), its ranks' spec made as the
job makes it (learner_setup.rank_spec: FSDP2 over NCCL, rank r on GPU r), take the step
one learner takes on the same batch: the same loss, clip fraction, tokens and weights
within tolerance, each rank holding only its rows, on its GPU. Skipped with the reason
where fewer than 2 GPUs exist; in a rehearsal (PODIUM_GPU_REHEARSAL=1) the same body runs
on CPU over gloo (device: cpu)."""

from __future__ import annotations

from pathlib import Path

import pytest
from learner_steps import step_both

from trainers.async_rl.host import check_rank_gpus
from trainers.async_rl.learner_setup import rank_spec
from trainers.config import GrpoConfig
from trainers.runtime import BaseModelRef
from trainers.weight_sync.checksum import row_slices

pytestmark = pytest.mark.gpu

# Two minibatches over two epochs, one sample a forward pass: four optimizer steps, so the
# policy moves within the batch and the clip acts (a constant rate: no warm-up to wait).
CARD = {
    "model": "base",
    "table": {"name": "demo.chat"},
    "out": "fsdp2-1",
    "rollout": "async",
    "learner_ranks": 2,
    "learning_rate": 1e-2,
    "lr_scheduler": "constant",
    "warmup_steps": 0,
    "temperature": 0.7,
    "ppo_minibatches": 2,
    "ppo_epochs": 2,
    "batch_size": 1,
    "grad_accum": 4,
}


def test_two_fsdp2_ranks_step_like_one_learner(
    tiny_checkpoint: Path, gpu_device: str, tmp_path: Path
) -> None:
    import torch

    if gpu_device == "cuda" and (count := torch.cuda.device_count()) < 2:
        pytest.skip(f"needs 2 GPUs for 2 FSDP2 learner ranks; {count} visible")
    cfg = GrpoConfig.model_validate({**CARD, "device": gpu_device})
    check_rank_gpus(cfg)  # 2 GPUs here: accepted (below 2 it names the count)
    devices = ["cuda:0", "cuda:1"] if gpu_device == "cuda" else ["cpu"]
    spec = rank_spec(cfg, BaseModelRef("base", tiny_checkpoint), devices, 0, tmp_path)
    assert spec.device == gpu_device and [spec.gpu(r) for r in range(2)] == [0, 1]
    both = step_both(tiny_checkpoint, tmp_path, spec.settings, gpu_device, spec=spec)

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
