"""Async GRPO with the learner and its replica on one GPU (`make test-gpu`): pushes go
through vLLM's own CUDA IPC engine (trainers/weight_sync/ipc.py) and are verified on the
engine: the checksum of the bytes behind the IPC handles, vLLM's fingerprint of the
engine's parameters moved, and the log-prob probe (trainers/async_rl/probe.py) within
0.1 of the learner's (vLLM's dtype auto serves the float32 checkpoint in bf16).

The rollouts of step v+1 are generated while push v is in flight (the async shape: a
sample is at most one version stale), on the real Learner, PolicyReplica and sync, without
the job's Ray and tables. Skipped with the reason without CUDA or a vLLM server; in a
rehearsal (PODIUM_GPU_REHEARSAL=1, CPU) the learner is not on the replica's GPU, so the
same body takes the gloo path, which is what this checks on CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainers.async_rl.learner import Learner, LearnerSettings, Sample, group_advantages
from trainers.async_rl.probe import probe
from trainers.async_rl.replica import PolicyReplica
from trainers.weight_sync import make_weight_sync
from trainers.weight_sync.base import rpc

pytestmark = pytest.mark.gpu

PROMPT = [1, 504, 3458, 282]
GROUP = 4


def test_colocated_async_grpo_pushes_through_vllms_ipc_engine(
    tiny_base: str, tiny_checkpoint: Path, gpu_device: str, vllm_server_env: None, tmp_path: Path
) -> None:
    import torch

    from trainers.runtime import load_model
    from trainers.weight_sync.ipc import transfer_backend

    on_gpu = gpu_device == "cuda"
    replica = PolicyReplica(tiny_base, colocated=on_gpu)
    replica.start()
    try:
        learner = Learner(
            load_model(tiny_checkpoint, gpu_device).to(gpu_device),
            LearnerSettings(learning_rate=1e-2, temperature=1.0),
        )
        uuid = rpc(replica.endpoint, "podium_device_uuid")
        backend = transfer_backend("nccl" if on_gpu else "gloo", learner.device, [uuid])
        assert backend == ("ipc" if on_gpu else "gloo"), (uuid, learner.device)
        sync = make_weight_sync(backend, work_dir=tmp_path)
        sync.connect([replica.endpoint])
        first = probe(replica.endpoint, tiny_base, learner.model)
        # The engine serves the checkpoint the learner started from.
        # The engine's bf16 against the learner's float32 on a GPU; float32 both on CPU.
        tolerance = 0.1 if on_gpu else 1e-3
        assert first.mismatch < tolerance, first

        rows = replica.generate([PROMPT], n=GROUP, max_tokens=8, temperature=1.0, seed=0)
        pushes = []
        for version in (1, 2):
            # A reward with spread in every group: the share of even token ids.
            rewards = [
                sum(t % 2 == 0 for t in r["completion_ids"]) / max(1, len(r["completion_ids"]))
                for r in rows
            ]
            samples = [
                Sample(PROMPT, r["completion_ids"], r["behaviour_logprobs"], a)
                for r, a in zip(rows, group_advantages(rewards, GROUP), strict=True)
            ]
            learner.step(samples)
            pushing = sync.push_async(learner.named_tensors(), version)
            rows = replica.generate([PROMPT], n=GROUP, max_tokens=8, temperature=1.0, seed=version)
            assert {r["policy_version"] for r in rows} <= {version - 1, version}
            pushes.append(pushing.result())
        last = probe(replica.endpoint, tiny_base, learner.model)
        sync.close()
    finally:
        replica.stop()
        if on_gpu:
            torch.cuda.empty_cache()

    for version, record in enumerate(pushes, start=1):
        assert record.backend == backend and record.version == version
        [verdict] = record.replicas
        assert verdict["match"] and verdict["resumed"] and verdict["moved"], verdict
    # The engine computes with the learner's new weights, not the checkpoint's.
    assert last.mismatch < tolerance, last
    moved = max(abs(a - b) for a, b in zip(last.engine, first.engine, strict=True))
    assert moved > 5 * tolerance, (moved, last, first)
