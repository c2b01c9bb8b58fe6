"""Semantic duplicates: rows whose embeddings are within a cosine threshold, found by
the embedding signal's vector index (each row's nearest neighbours), verified by the
exact cosine of the stored vectors, linked by union-find and split so that every member
is within the threshold of its canonical row (the smallest id), as near-dup does: the
same table shape, so "keep one per cluster" and Browse's duplicate facets act on it
unchanged. It needs the snapshot's current embeddings and their index."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.signals.clusters import ScoredClusters, UnionFind
from podium.signals.exact_dup import CLUSTER_FIELDS
from podium.signals.map_settings import SemanticDupSettings
from podium.signals.near_dup import components
from podium.signals.signal import Source, TableSignal

SEARCH_ROWS = 16_384  # queries per index search


def neighbour_pairs(
    graph: object, vectors: npt.NDArray[np.float32], neighbours: int, threshold: float
) -> npt.NDArray[np.int64]:
    """(a, b) row pairs, a < b, each the other's index neighbour with an exact cosine
    of at least `threshold`."""
    found: list[npt.NDArray[np.int64]] = []
    for start in range(0, len(vectors), SEARCH_ROWS):
        part = vectors[start : start + SEARCH_ROWS]
        hits = graph.search(part, neighbours + 1)  # type: ignore[attr-defined]
        keys = np.asarray(hits.keys, np.int64).reshape(len(part), -1)
        rows = np.repeat(np.arange(start, start + len(part), dtype=np.int64), keys.shape[1])
        other = keys.reshape(-1)
        # usearch pads a short result with an out-of-range key
        keep = (other >= 0) & (other < len(vectors)) & (other != rows)
        rows, other = rows[keep], other[keep]
        cosine = np.einsum("ij,ij->i", vectors[rows], vectors[other])
        close = cosine >= threshold
        found.append(np.stack([np.minimum(rows, other), np.maximum(rows, other)], 1)[close])
    if not found:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.concatenate(found), axis=0)


class SemanticDup(TableSignal[SemanticDupSettings]):
    name: ClassVar[str] = "semantic-dup"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "Rows whose embeddings are within a cosine threshold."
    schema: ClassVar[pa.Schema] = pa.schema([*CLUSTER_FIELDS, pa.field("cosine", pa.float32())])

    def __init__(self, settings: SemanticDupSettings) -> None:
        super().__init__(settings)
        self.counts = {"rows": 0, "pairs": 0, "clusters": 0, "duplicates": 0}

    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        from podium.signals.vector_index import load_index
        from podium.signals.vectors import embedding_signal, stored_vectors

        reporter.log("semantic-dup: embeddings and their index")
        found = stored_vectors(source.table, source.snapshot_id)
        _, stored, _ = embedding_signal(source.table, source.snapshot_id)
        index = load_index(stored)
        if not index.ids.equals(found.ids):
            raise InvalidInput(
                f"The vector index of {source.table} does not hold its embeddings' rows in "
                "their order; run the embedding signal again."
            )
        ids, vectors = found.ids, found.vectors
        self.counts["rows"] = len(ids)
        reporter.log(f"semantic-dup: neighbours of {len(ids)} rows")
        pairs = neighbour_pairs(
            index.graph, vectors, self.settings.neighbours, self.settings.threshold
        )
        self.counts["pairs"] = len(pairs)
        links = UnionFind(len(ids))
        for a, b in pairs.tolist():
            links.union(a, b)
        rows = np.unique(pairs).astype(np.int64)

        def cosine(a: int, b: int) -> float:
            return float(vectors[a] @ vectors[b])

        found_clusters = ScoredClusters()
        for part in components(rows, links.roots(rows), ids):
            found_clusters.split(part, cosine, self.settings.threshold)
        yield from found_clusters.batches(ids, self.schema, self.counts)

    def summary(self) -> dict[str, int]:
        return dict(self.counts)
