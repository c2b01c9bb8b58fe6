"""Moving the learner's weights into the generation replicas: one interface, four
backends (`gloo` on CPU, `nccl` on GPU, `ipc` through vLLM's CUDA IPC engine for a
learner on its replicas' GPU, `disk` through safetensors), every push verified by
checksum. See base.py for the protocol and README "Weight transfer".

    sync = make_weight_sync("gloo", work_dir=run_dir)
    sync.connect([ReplicaEndpoint(0, url0), ReplicaEndpoint(1, url1)])  # warm-up, once
    future = sync.push_async(model.named_parameters(), version=1)   # keep training
    record = future.result()  # SyncRecord; WeightSyncError on any mismatch
"""

from __future__ import annotations

from pathlib import Path

from trainers.weight_sync.base import SyncRecord, WeightSync
from trainers.weight_sync.replica_calls import ReplicaEndpoint, ReplicaLoadError, WeightSyncError

BACKENDS = ("gloo", "nccl", "disk", "ipc")

__all__ = [
    "BACKENDS",
    "ReplicaEndpoint",
    "SyncRecord",
    "WeightSync",
    "ReplicaLoadError",
    "WeightSyncError",
    "make_weight_sync",
]


def make_weight_sync(
    backend: str,
    *,
    learner_ranks: int = 1,
    rank: int = 0,
    work_dir: Path,
    corrupt_for_tests: bool = False,
    address: tuple[str, int] | None = None,
) -> WeightSync:
    """The learner-side sync for `backend`. With learner_ranks > 1 every rank makes its
    own, all with the same `address` (host, port) of the store rank 0 hosts; replicas
    must reach that host (on Ray: the learner node's IP)."""
    if backend == "disk":
        from trainers.weight_sync.disk import DiskWeightSync

        return DiskWeightSync(
            work_dir=work_dir,
            learner_ranks=learner_ranks,
            rank=rank,
            corrupt_for_tests=corrupt_for_tests,
            address=address,
        )
    if backend == "ipc":
        from trainers.weight_sync.ipc import IpcWeightSync

        return IpcWeightSync(
            learner_ranks=learner_ranks, rank=rank, corrupt_for_tests=corrupt_for_tests
        )
    if backend in ("gloo", "nccl"):
        from trainers.weight_sync.gloo import GlooWeightSync
        from trainers.weight_sync.nccl import NcclWeightSync

        cls = GlooWeightSync if backend == "gloo" else NcclWeightSync
        return cls(
            learner_ranks=learner_ranks,
            rank=rank,
            corrupt_for_tests=corrupt_for_tests,
            address=address,
        )
    raise WeightSyncError(
        f"unknown weight_sync backend {backend!r}; choose one of {', '.join(BACKENDS)}"
    )
