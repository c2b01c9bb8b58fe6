"""Async GRPO with the learner and its replica on one GPU (`make test-gpu`): pushes go
through vLLM's own CUDA IPC engine (trainers/weight_sync/ipc.py) and are verified on the
engine: the checksum of the bytes behind the IPC handles, vLLM's fingerprint of the
engine's parameters moved, and the log-prob probe (trainers/async_rl/probe.py) within
0.1 of the learner's (vLLM's dtype auto serves the float32 checkpoint in bf16).

The card's path (placement: colocated, weight_sync: nccl): its plan gives the replica
its share of the GPU and the learner the rest (torch's per-process cap), and the
learner's host (`LearnerHost`, what the job's learner actor runs) picks the backend from
the replica's reported GPU through `ipc.transfer_backend`: CUDA IPC. The rollouts of step
v+1 are generated while push v is in flight (the async shape: a sample is at most one
version stale), without the job's Ray and tables (the seats on Ray:
tests/ray/test_gpu_seats.py). Skipped with the reason without CUDA or a vLLM server; in a
rehearsal (PODIUM_GPU_REHEARSAL=1, CPU) the card is a separate one on CPU with gloo, the
learner not on the replica's GPU, so the same body takes the gloo path, which is what
this checks on CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainers.async_rl.learner import Sample, group_advantages
from trainers.async_rl.learner_host import LearnerHost
from trainers.async_rl.learner_setup import learner_spec
from trainers.async_rl.placement import plan_placement
from trainers.async_rl.probe import probe
from trainers.async_rl.replica import PolicyReplica
from trainers.config import GrpoConfig
from trainers.runtime import BaseModelRef
from trainers.weight_sync.ipc import backend_for

pytestmark = pytest.mark.gpu

PROMPT = [1, 504, 3458, 282]
GROUP = 4


def test_colocated_async_grpo_pushes_through_vllms_ipc_engine(
    tiny_base: str, tiny_checkpoint: Path, gpu_device: str, vllm_server_env: None, tmp_path: Path
) -> None:
    import torch

    on_gpu = gpu_device == "cuda"
    placed = {"placement": "colocated", "weight_sync": "nccl"} if on_gpu else {}
    cfg = GrpoConfig.model_validate(
        {"model": tiny_base, "table": {"name": "demo.chat"}, "out": "colocated-1"}
        | {"rollout": "async", "device": gpu_device, "learning_rate": 1e-2, "temperature": 1.0}
        | placed
    )
    placement = plan_placement(cfg, gpu_device, learner_cpus=1.0)
    spec = learner_spec(cfg, BaseModelRef(tiny_base, tiny_checkpoint), 0, tmp_path, placement)
    replica = PolicyReplica(tiny_base, colocated=on_gpu, gpu_memory=placement.colocated or 0.4)
    replica.start()
    host = None
    try:
        host = LearnerHost(spec)
        learner, backend = host.learner, host.connect([replica.endpoint])
        assert backend == ("ipc" if on_gpu else "gloo"), (backend, learner.device)
        # The replica's own report of its GPU (None on CPU) decides a GPU path too.
        nccl = backend_for("nccl", learner.device, [replica.endpoint])
        assert nccl == ("ipc" if on_gpu else "nccl"), nccl
        sync = host.sync
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
    finally:
        if host is not None:
            host.close()
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
