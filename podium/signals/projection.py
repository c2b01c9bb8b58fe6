"""The projection: one 2-D point per row for the map, from its embedding (PCA fitted
on a sample, then applied to every row a batch at a time)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.signals.map_settings import ProjectionSettings
from podium.signals.signal import Source, TableSignal
from podium.signals.vectors import source_batches


def fit_projection(sample: npt.NDArray[Any], seed: int) -> Any:
    """PCA to two dimensions fitted on `sample`; None under two rows (every point 0, 0)."""
    from sklearn.decomposition import PCA

    return PCA(n_components=2, random_state=seed).fit(sample) if len(sample) >= 2 else None


def project(pca: Any, vectors: npt.NDArray[Any]) -> npt.NDArray[Any]:
    if pca is None:
        return np.zeros((len(vectors), 2), np.float32)
    return np.asarray(pca.transform(vectors), np.float32)


@dataclass
class TablePoints:
    table: str
    ids: pa.Array
    points: npt.NDArray[np.float32]
    total: int  # rows with a vector (before sampling)


def joint_points(
    tables: list[str], max_points: int, fit_rows: int = 200_000, seed: int = 0
) -> list[TablePoints]:
    """Several tables' rows as points of ONE projection, fitted on an equal sample of
    each table's vectors (each table's own projection has its own axes, so points of two
    tables could not share a map); a table with more than its share of `max_points` gives
    an even sample of its rows. Read from their current embeddings, which one model with
    the same dimensions must have made."""
    from podium.signals.vectors import stored_batches

    found = [(table, stored_batches(table)) for table in tables]
    made_by = {(b.model, b.dims) for _, b in found}
    if len(made_by) > 1:
        models = ", ".join(f"{t}: {b.model} ({b.dims})" for t, b in found)
        raise InvalidInput(
            f"These tables' embeddings come from different models ({models}); embed them "
            "with one model to draw them on one map."
        )
    share = max(1, fit_rows // max(1, len(found)))
    pca = fit_projection(np.concatenate([b.sample(share, seed) for _, b in found]), seed)
    per_table = max(1, max_points // max(1, len(found)))
    out = []
    for table, vectors in found:
        step = -(-vectors.count // per_table)
        ids: list[pa.Array] = []
        points: list[npt.NDArray[np.float32]] = []
        at = 0
        for batch_ids, batch in vectors.batches():
            take = np.arange((-at) % step, len(batch), step)
            ids.append(batch_ids.take(pa.array(take)).cast(pa.string()))
            points.append(project(pca, batch[take]))
            at += len(batch)
        out.append(
            TablePoints(
                table,
                pa.concat_arrays(ids) if ids else pa.array([], pa.string()),
                np.concatenate(points) if points else np.zeros((0, 2), np.float32),
                vectors.count,
            )
        )
    return out


class Projection(TableSignal[ProjectionSettings]):
    name: ClassVar[str] = "projection"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "A 2-D point per row for the map."
    schema: ClassVar[pa.Schema] = pa.schema(
        [pa.field("id", pa.string()), pa.field("x", pa.float32()), pa.field("y", pa.float32())]
    )

    def __init__(self, settings: ProjectionSettings) -> None:
        super().__init__(settings)
        self.rows = 0

    def run(self, source: Source, reporter: Reporter) -> Iterator[pa.RecordBatch]:
        found = source_batches(source)
        seed = self.settings.seed
        pca = fit_projection(found.sample(self.settings.fit_rows, seed), seed)
        if not found.count:
            yield pa.RecordBatch.from_pylist([], schema=self.schema)
        for ids, vectors in found.batches():
            points = project(pca, vectors)
            self.rows += len(points)
            yield pa.RecordBatch.from_arrays(
                [ids.cast(pa.string()), pa.array(points[:, 0]), pa.array(points[:, 1])],
                schema=self.schema,
            )

    def summary(self) -> dict[str, int]:
        return {"rows": self.rows}
