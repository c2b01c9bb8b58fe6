"""Exact duplicates: rows whose chosen turns are equal after lower-casing and
collapsing white space, grouped by a 64-bit hash of that text (a table signal in two
stages: hash every row, then group). Only rows with at least one twin are stored."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.reporting import Reporter
from podium.signals.clusters import clusters_from_groups
from podium.signals.settings import ExactDupSettings
from podium.signals.signal import Source, TableSignal
from podium.signals.turns import Turns

CLUSTER_FIELDS = [
    pa.field("id", pa.string()),
    pa.field("cluster", pa.string()),  # the canonical row's id
    pa.field("size", pa.int32()),
    pa.field("is_canonical", pa.bool_()),
]


def normalised(text: str) -> str:
    return " ".join(text.lower().split())


def text_hash(text: str) -> int:
    digest = hashlib.blake2b(normalised(text).encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "little")


def row_hashes(every: Iterable[Turns]) -> tuple[pa.Array, npt.NDArray[np.uint64]]:
    """Stage 1: every row's id and the hash of its normalised text, in scan order."""
    ids: list[pa.Array] = []
    hashes: list[npt.NDArray[np.uint64]] = []
    for turns in every:
        texts = turns.row_texts()
        hashes.append(np.fromiter(map(text_hash, texts), np.uint64, len(texts)))
        ids.append(pa.array(turns.ids, pa.string()))
    every_id = pa.concat_arrays(ids) if ids else pa.array([], pa.string())
    return every_id, np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)


def group_hashes(*scan: Any) -> tuple[pa.Array, npt.NDArray[np.uint64]]:
    """The Ray task of stage 1: `row_hashes` of one group of data files (`scan`:
    `on_ray.group_turns`'s arguments)."""
    from podium.signals.on_ray import group_turns

    return row_hashes(group_turns(*scan))


class ExactDup(TableSignal[ExactDupSettings]):
    name: ClassVar[str] = "exact-dup"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "Rows equal after normalising case and white space."
    schema: ClassVar[pa.Schema] = pa.schema([*CLUSTER_FIELDS, pa.field("hash", pa.string())])

    def __init__(self, settings: ExactDupSettings) -> None:
        super().__init__(settings)
        self.counts = {"rows": 0, "clusters": 0, "duplicates": 0}

        self.nodes = 0  # > 0: stage 1 in Ray tasks over up to this many nodes

    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        if self.nodes:  # stage 1 a task per group of data files, joined in file order
            from podium.signals.on_ray import by_file_groups  # Ray: only here

            parts = by_file_groups(source, group_hashes, (), self.nodes, "exact-dup: hashes of")
            every_id = pa.concat_arrays([i for i, _ in parts] or [pa.array([], pa.string())])
            every_hash = np.concatenate([h for _, h in parts] or [np.zeros(0, np.uint64)])
        else:
            every_id, every_hash = row_hashes(source.turns())  # stage 1: one hash per row
        self.counts["rows"] = len(every_hash)
        # stage 2: group equal hashes
        _, group, counts = np.unique(every_hash, return_inverse=True, return_counts=True)
        rows = np.flatnonzero(counts[group] > 1).astype(np.int64)
        for found, canonical, size, first in clusters_from_groups(rows, group[rows], every_id):
            self.counts["clusters"] += int(first.sum())
            self.counts["duplicates"] += int((~first).sum())
            yield pa.RecordBatch.from_arrays(
                [
                    every_id.take(pa.array(found)),
                    canonical,
                    pa.array(size.astype(np.int32)),
                    pa.array(first),
                    pa.array([f"{h:016x}" for h in every_hash[found].tolist()], pa.string()),
                ],
                schema=self.schema,
            )

    def summary(self) -> dict[str, int]:
        return dict(self.counts)
