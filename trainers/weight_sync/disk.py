"""Weights through a safetensors file: the fallback, and the benchmark's baseline.

A single learner writes the tensors to `work_dir/weights/v{version}.safetensors` (the
replicas must see that path: same machine, or a shared filesystem); with R learner
ranks each writes its rows to a file of its own and the replica joins them. Then each
replica loads through the worker extension (`podium_load_file`, the same in-place
reload and checksum as a transfer). The previous version's files are removed once a
push succeeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Unpack

import torch

from trainers.weight_sync.base import SyncOptions, SyncRecord, WeightSync, rows_of, timed
from trainers.weight_sync.plan import TransferPlan
from trainers.weight_sync.replica_calls import (
    ReplicaEndpoint,
    load_problem,
    rpc,
    swap_at_safe_point,
    verify,
)


class DiskWeightSync(WeightSync):
    backend = "disk"

    def __init__(self, *, work_dir: Path, **options: Unpack[SyncOptions]) -> None:
        super().__init__(**options)
        self.dir = Path(work_dir) / "weights"
        self._last: list[Path] = []

    def connect(self, replicas: Sequence[ReplicaEndpoint]) -> None:
        for replica in replicas:
            if self.rank == 0:
                rpc(replica, "podium_weight_version")  # has the extension, answers
            self.replicas[replica.index] = replica

    def _path(self, version: int, rank: int) -> Path:
        if self.learner_ranks == 1:
            return self.dir / f"v{version}.safetensors"
        return self.dir / f"v{version}.push{self._pushes}.rank{rank}.safetensors"

    def _write(
        self, plan: TransferPlan, tensors: list[tuple[str, torch.Tensor]], path: Path
    ) -> None:
        """The whole tensors when this is the only rank, else this rank's rows."""
        from safetensors.torch import save_file

        rows = tensors
        if self.learner_ranks > 1:
            rows = [
                (planned.name, rows_of(planned, tensor, self.rank))
                for planned, (_, tensor) in zip(plan.tensors, tensors, strict=True)
                if planned.slices[self.rank][1] > planned.slices[self.rank][0]
            ]
        self.dir.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        save_file(dict(_unshared(rows)), str(partial))
        partial.replace(path)

    def _push_to(
        self,
        targets: Sequence[ReplicaEndpoint],
        plan: TransferPlan,
        tensors: list[tuple[str, torch.Tensor]],
        version: int,
    ) -> SyncRecord:
        record = self._record(version, plan, targets)
        mine = self._path(version, self.rank)
        if not (self._memo.get("written") == mine and mine.exists()):  # rolling: once
            timed(record.phases, "write_s", self._write, plan, tensors, mine)
            self._memo["written"] = mine
        if self.rank != 0:  # wrote its rows; rank 0 has the replicas load every file
            self.publish(plan, tensors)
            return record
        paths = [self._path(version, r) for r in range(self.learner_ranks)]
        spec = {
            "paths": [str(p) for p in paths],
            "version": version,
            "learner_ranks": self.learner_ranks,
            "tensors": plan.replica_meta(version)["tensors"],
        }
        with ThreadPoolExecutor(max_workers=len(targets) + 1) as pool:
            expected = pool.submit(
                timed, record.phases, "digests_s", self.expected_checksum, plan, tensors
            )
            if self.learner_ranks > 1:
                expected.result()  # the followers publish their digests once written

            def one(replica: ReplicaEndpoint) -> dict[str, Any]:
                load = {**spec, "corrupt": self.corrupts_load()}
                return swap_at_safe_point(
                    replica,
                    lambda: rpc(replica, "podium_load_file", load),
                    lambda got: load_problem(version, expected.result(), got),
                )

            answers = [(r, pool.submit(one, r)) for r in targets]
            results = [(r, a.result()) for r, a in answers]
            record.replicas = verify(version, expected.result(), results)
        for old in self._last:
            if old not in paths:
                old.unlink(missing_ok=True)
        self._last = paths
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
