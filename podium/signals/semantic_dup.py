"""Semantic duplicates: rows whose embeddings are within a cosine threshold, found by
the embedding signal's vector index (each row's nearest neighbours), verified by the
exact cosine of the stored vectors, linked by union-find and split so that every member
is within the threshold of its canonical row (the smallest id), as near-dup does: the
same table shape, so "keep one per cluster" and Browse's duplicate facets act on it
unchanged. It needs the snapshot's current embeddings and their index.

Memory stays bounded: the vectors are read a batch at a time (1 GB at 1M rows of 256
dimensions, never held together). A batch's rows search the memory-mapped index; a
neighbour whose half-precision cosine (the index's) is within `MARGIN` of the threshold
is a candidate, and only the candidates' vectors are read again, exactly, to verify."""

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
# The index's cosines are half precision (errors ~1e-3 for unit vectors); a neighbour
# this far under the threshold by them cannot reach it exactly.
MARGIN = 0.02


def candidate_pairs(
    graph: object,
    vectors: npt.NDArray[np.float32],
    start: int,
    rows: int,
    neighbours: int,
    threshold: float,
) -> npt.NDArray[np.int64]:
    """(a, b) row pairs, a < b, unique: a in rows `start..` (`vectors`, its batch), b its
    index neighbour among all `rows`, whose index cosine is within MARGIN of `threshold`."""
    found: list[npt.NDArray[np.int64]] = []
    for at in range(0, len(vectors), SEARCH_ROWS):
        part = vectors[at : at + SEARCH_ROWS]
        hits = graph.search(part, neighbours + 1)  # type: ignore[attr-defined]
        keys = np.asarray(hits.keys, np.int64).reshape(len(part), -1)
        # A short result's padding carries no distance (inf or NaN), and its key is dropped below.
        with np.errstate(invalid="ignore"):
            approx = 1 - np.asarray(hits.distances, np.float32).reshape(len(part), -1)
        first = start + at
        mine = np.repeat(np.arange(first, first + len(part), dtype=np.int64), keys.shape[1])
        other = keys.reshape(-1)
        # usearch pads a short result with an out-of-range key
        keep = (other >= 0) & (other < rows) & (other != mine)
        keep &= approx.reshape(-1) >= threshold - MARGIN
        mine, other = mine[keep], other[keep]
        found.append(np.stack([np.minimum(mine, other), np.maximum(mine, other)], 1))
    if not found:
        return np.zeros((0, 2), np.int64)
    return np.unique(np.concatenate(found), axis=0)


VERIFY_PAIRS = 32_768  # pairs whose two vectors are gathered at once (64 MB at 256 dims)


def exact_cosines(
    held: dict[int, npt.NDArray[np.float32]], pairs: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """The exact cosine of each pair, computed as a row-by-row einsum (the same sums,
    so a pair on the threshold falls the same side however it is batched), a bounded
    number of pairs at a time."""
    out = np.empty(len(pairs), np.float32)
    for at in range(0, len(pairs), VERIFY_PAIRS):
        part = pairs[at : at + VERIFY_PAIRS]
        left = np.stack([held[a] for a in part[:, 0].tolist()])
        right = np.stack([held[b] for b in part[:, 1].tolist()])
        out[at : at + len(part)] = np.einsum("ij,ij->i", left, right)
    return out


def rows_vectors(
    batches: Iterator[tuple[pa.Array, npt.NDArray[np.float32]]], wanted: npt.NDArray[np.int64]
) -> dict[int, npt.NDArray[np.float32]]:
    """The vectors of rows `wanted` (sorted row numbers), read a batch at a time."""
    out: dict[int, npt.NDArray[np.float32]] = {}
    start = 0
    for _, vectors in batches:
        end = start + len(vectors)
        inside = wanted[(wanted >= start) & (wanted < end)]
        for row, vector in zip(inside.tolist(), vectors[inside - start], strict=True):
            out[row] = vector
        start = end
    return out


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
        from podium.signals.vectors import embedding_signal, stored_batches

        reporter.log("semantic-dup: embeddings and their index")
        found = stored_batches(source.table, source.snapshot_id)
        _, stored, _ = embedding_signal(source.table, source.snapshot_id)
        index = load_index(stored)
        mismatch = InvalidInput(
            f"The vector index of {source.table} does not hold its embeddings' rows in "
            "their order; run the embedding signal again."
        )
        if len(index.ids) != found.count:
            raise mismatch
        threshold = self.settings.threshold
        reporter.log(f"semantic-dup: neighbours of {found.count} rows")
        candidates: list[npt.NDArray[np.int64]] = []
        start = 0
        for batch_ids, vectors in found.batches():
            if not index.ids.slice(start, len(batch_ids)).equals(batch_ids.cast(pa.string())):
                raise mismatch
            candidates.append(
                candidate_pairs(
                    index.graph, vectors, start, found.count, self.settings.neighbours, threshold
                )
            )
            start += len(vectors)
        pairs = np.unique(np.concatenate(candidates), axis=0) if candidates else np.zeros((0, 2))
        pairs = pairs.astype(np.int64).reshape(-1, 2)
        held = rows_vectors(found.batches(), np.unique(pairs))

        def cosine(a: int, b: int) -> float:
            return float(held[a] @ held[b])

        pairs = pairs[exact_cosines(held, pairs) >= threshold]
        ids = index.ids
        self.counts["rows"] = len(ids)
        self.counts["pairs"] = len(pairs)
        links = UnionFind(len(ids))
        for a, b in pairs.tolist():
            links.union(a, b)
        rows = np.unique(pairs).astype(np.int64)
        found_clusters = ScoredClusters()
        for part in components(rows, links.roots(rows), ids):
            found_clusters.split(part, cosine, threshold)
        yield from found_clusters.batches(ids, self.schema, self.counts)

    def summary(self) -> dict[str, int]:
        return dict(self.counts)
