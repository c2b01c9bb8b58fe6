"""Weights through a safetensors file: the fallback, and the benchmark's baseline.

Learner rank 0 writes the tensors to `work_dir/weights/v{version}.safetensors` (the
replicas must see that path: same machine, or a shared filesystem), then each replica
loads it through the worker extension (`podium_load_file`, the same in-place reload and
checksum as a transfer). The previous version's file is removed once a push succeeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from trainers.weight_sync.base import (
    ReplicaEndpoint,
    SyncRecord,
    WeightSync,
    rpc,
    swap_at_safe_point,
    verify,
)
from trainers.weight_sync.checksum import weights_checksum


class DiskWeightSync(WeightSync):
    backend = "disk"

    def __init__(
        self,
        *,
        work_dir: Path,
        learner_ranks: int = 1,
        rank: int = 0,
        corrupt_for_tests: bool = False,
    ) -> None:
        super().__init__(
            learner_ranks=learner_ranks, rank=rank, corrupt_for_tests=corrupt_for_tests
        )
        self.dir = Path(work_dir) / "weights"
        self._last: Path | None = None

    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        for replica in replicas:
            if self.rank == 0:
                rpc(replica, "podium_weight_version")  # has the extension, answers
            self.replicas[replica.index] = replica

    def _push_to(
        self,
        targets: Sequence[ReplicaEndpoint],
        tensors: list[tuple[str, torch.Tensor]],
        version: int,
    ) -> SyncRecord:
        size = sum(t.numel() * t.element_size() for _, t in tensors)
        record = SyncRecord(
            version=version, backend=self.backend, bytes=size * len(targets), seconds=0.0
        )
        if self.rank != 0:
            return record  # rank 0 holds the full tensors and writes the file
        from safetensors.torch import save_file

        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"v{version}.safetensors"
        partial = path.with_suffix(".partial")
        save_file(dict(_unshared(tensors)), str(partial))
        partial.replace(path)
        spec = {"path": str(path), "version": version, "corrupt": self.corrupt_for_tests}
        with ThreadPoolExecutor(max_workers=len(targets) + 1) as pool:
            expected = pool.submit(weights_checksum, tensors)

            def one(replica: ReplicaEndpoint) -> dict[str, Any]:
                return swap_at_safe_point(replica, lambda: rpc(replica, "podium_load_file", spec))

            answers = [(r, pool.submit(one, r)) for r in targets]
            results = [(r, a.result()) for r, a in answers]
            record.replicas = verify(version, expected.result(), results)
        if self._last is not None and self._last != path:
            self._last.unlink(missing_ok=True)
        self._last = path
        return record


def _unshared(tensors: list[tuple[str, torch.Tensor]]) -> list[tuple[str, torch.Tensor]]:
    """safetensors refuses tensors that share memory (tied embeddings): copy repeats."""
    seen: set[int] = set()
    out = []
    for name, tensor in tensors:
        ptr = tensor.untyped_storage().data_ptr()
        out.append((name, tensor.clone() if ptr in seen else tensor))
        seen.add(ptr)
    return out
