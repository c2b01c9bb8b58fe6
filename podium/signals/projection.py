"""The projection: one 2-D point per row for the map, from its embedding (PCA fitted
on a sample, then applied to every row a batch at a time)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

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
