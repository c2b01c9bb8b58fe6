"""Rows linked in pairs, grouped into clusters with one canonical row each.

The canonical row of a cluster is the one with the smallest id (ids compared as
text): a rule anyone can check by eye, and the same whatever order the rows were
read in, on one machine or many.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import numpy.typing as npt
import pyarrow as pa


class UnionFind:
    """Union-find over row indices [0, n), with path halving and union by size."""

    def __init__(self, n: int) -> None:
        self.parent = np.arange(n, dtype=np.int64)
        self.size = np.ones(n, dtype=np.int64)

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = int(parent[i])
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]

    def roots(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return np.fromiter((self.find(int(r)) for r in rows), np.int64, len(rows))


def clusters_from_groups(
    rows: npt.NDArray[np.int64], groups: npt.NDArray[np.int64], ids: pa.Array
) -> Iterator[tuple[npt.NDArray[np.int64], pa.Array, npt.NDArray[np.int64], npt.NDArray[np.bool_]]]:
    """For rows labelled with a group each (groups of one already left out): per chunk
    of output, (row indices, canonical id of each row's cluster, cluster size,
    is_canonical). `ids` holds every row's id by row index."""
    if len(rows) == 0:
        return
    member_ids = ids.take(pa.array(rows))
    table = pa.table({"group": pa.array(groups), "id": member_ids, "row": pa.array(rows)})
    table = table.sort_by([("group", "ascending"), ("id", "ascending")]).combine_chunks()
    group = table.column("group").to_numpy()
    first = np.concatenate(([True], group[1:] != group[:-1]))
    starts = np.flatnonzero(first)
    sizes = np.diff(np.concatenate((starts, [len(group)])))
    which = np.cumsum(first) - 1
    canonical = table.column("id").chunk(0).take(pa.array(starts[which]))
    yield (
        table.column("row").to_numpy(),
        canonical,
        sizes[which].astype(np.int64),
        first,
    )


def split_at_canonical(
    members: list[int], similarity: Callable[[int, int], float], threshold: float
) -> Iterator[tuple[int, list[tuple[int, float]]]]:
    """Split one connected component (row indices in canonical order: smallest id first)
    into clusters whose every member is within `threshold` of the cluster's canonical.

    Union-find chains rows: A~B and B~C put A and C together though they may share
    little (six sentences mixed into many rows link them all). So, as NeMo Curator
    checks each member against its group's anchor: the first row left is a canonical,
    every row left within the threshold of it joins it, and the rest start again.
    Yields (canonical, [(member, similarity to the canonical)]) for clusters of two or
    more; a row within the threshold of no canonical is in no cluster."""
    left = members
    while len(left) > 1:
        canonical, rest = left[0], []
        joined: list[tuple[int, float]] = []
        for row in left[1:]:
            score = similarity(canonical, row)
            if score >= threshold:
                joined.append((row, score))
            else:
                rest.append(row)
        if joined:
            yield canonical, joined
        left = rest


class ScoredClusters:
    """Rows gathered into clusters (`split_at_canonical`'s output), each with its score
    against its canonical row (a canonical's: the highest of its members'), and the
    signal's batches of them: id, cluster (canonical id), size, is_canonical, score."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.canonical: list[int] = []
        self.score: list[float] = []

    def split(
        self, members: list[int], similarity: Callable[[int, int], float], threshold: float
    ) -> None:
        for canonical, joined in split_at_canonical(members, similarity, threshold):
            self.rows.append(canonical)
            self.canonical.append(canonical)
            self.score.append(max(s for _, s in joined))
            for row, s in joined:
                self.rows.append(row)
                self.canonical.append(canonical)
                self.score.append(s)

    def batches(
        self, ids: pa.Array, schema: pa.Schema, counts: dict[str, int]
    ) -> Iterator[pa.RecordBatch]:
        """The signal's batches; `counts` gains its clusters and duplicates."""
        if not self.rows:
            return
        score_of = np.zeros(len(ids), np.float32)
        score_of[self.rows] = self.score
        for rows_out, canonical, size, first in clusters_from_groups(
            np.array(self.rows, np.int64), np.array(self.canonical, np.int64), ids
        ):
            counts["clusters"] += int(first.sum())
            counts["duplicates"] += int((~first).sum())
            yield pa.RecordBatch.from_arrays(
                [
                    ids.take(pa.array(rows_out)),
                    canonical,
                    pa.array(size.astype(np.int32)),
                    pa.array(first),
                    pa.array(score_of[rows_out]),
                ],
                schema=schema,
            )
