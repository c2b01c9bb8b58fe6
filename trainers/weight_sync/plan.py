"""The n -> m transfer plan: for each tensor, which learner rank sends which rows to
which replica.

Every replica receives every tensor whole. With `learner_ranks` R, each tensor's dim-0
rows are cut into R contiguous near-equal slices (`row_slices`, shared with the replica
so both sides cut alike) and rank r sends slice r to every replica, so R learner
processes push R times the bandwidth of one. A replica assembles the slices into a
full tensor before it loads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trainers.weight_sync.checksum import row_slices


@dataclass(frozen=True)
class PlannedTensor:
    index: int  # the transfer's message tag is index + 1 (tag 0 is the warm-up probe)
    name: str
    shape: tuple[int, ...]
    dtype: str
    slices: tuple[tuple[int, int], ...]  # rows [start, stop) per learner rank


@dataclass(frozen=True)
class Route:
    name: str
    rank: int
    rows: tuple[int, int]
    replica: int


@dataclass(frozen=True)
class TransferPlan:
    learner_ranks: int
    tensors: tuple[PlannedTensor, ...]

    def sends(self, rank: int) -> Iterator[tuple[PlannedTensor, int, int]]:
        """What `rank` sends to each replica: (tensor, start row, stop row), non-empty."""
        for planned in self.tensors:
            start, stop = planned.slices[rank]
            if stop > start:
                yield planned, start, stop

    def routes(self, replicas: Sequence[int]) -> Iterator[Route]:
        """The whole plan spelled out, one line per (tensor, rank, replica)."""
        for planned in self.tensors:
            for rank, rows in enumerate(planned.slices):
                if rows[1] > rows[0]:
                    for replica in replicas:
                        yield Route(planned.name, rank, rows, replica)

    def replica_meta(self, version: int, *, corrupt: bool = False) -> dict[str, Any]:
        """What the replica needs to post its receives (see vllm_extension)."""
        return {
            "version": version,
            "learner_ranks": self.learner_ranks,
            "tensors": [[t.name, list(t.shape), t.dtype] for t in self.tensors],
            "corrupt": corrupt,
        }

    @property
    def bytes(self) -> int:
        """Bytes one replica receives."""
        total = 0
        for t in self.tensors:
            count = 1
            for dim in t.shape:
                count *= dim
            total += count * torch.empty((), dtype=_dtype(t.dtype)).element_size()
        return total


def _dtype(name: str) -> torch.dtype:
    from trainers.weight_sync.vllm_extension import parse_dtype

    return parse_dtype(name)


def make_plan(
    named_tensors: Sequence[tuple[str, torch.Tensor]], learner_ranks: int
) -> TransferPlan:
    """The plan for these tensors (every rank builds the same one from the same names
    and shapes; tensors are taken in name order)."""
    if learner_ranks < 1:
        raise ValueError(f"learner_ranks must be at least 1, got {learner_ranks}")
    ordered = sorted(named_tensors, key=lambda item: item[0])
    return TransferPlan(
        learner_ranks=learner_ranks,
        tensors=tuple(
            PlannedTensor(
                index=i,
                name=name,
                shape=tuple(tensor.shape),
                dtype=str(tensor.dtype).removeprefix("torch."),
                slices=tuple(row_slices(tuple(tensor.shape), learner_ranks)),
            )
            for i, (name, tensor) in enumerate(ordered)
        ),
    )
