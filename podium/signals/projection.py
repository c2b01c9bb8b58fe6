"""The projection: one 2-D point per row for the map, from its embedding (PCA fitted
on a sample, applied to every row)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.reporting import Reporter
from podium.signals.map_settings import ProjectionSettings
from podium.signals.signal import Source, TableSignal
from podium.signals.vectors import source_vectors


def project(vectors: npt.NDArray[Any], settings: ProjectionSettings) -> npt.NDArray[Any]:
    from sklearn.decomposition import PCA

    n = len(vectors)
    if n < 2:
        return np.zeros((n, 2), np.float32)
    rng = np.random.default_rng(settings.seed)
    fit = vectors if n <= settings.fit_rows else vectors[rng.choice(n, settings.fit_rows, False)]
    pca = PCA(n_components=2, random_state=settings.seed).fit(fit)
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
        found = source_vectors(source)
        points = project(found.vectors, self.settings)
        self.rows = len(points)
        yield pa.RecordBatch.from_arrays(
            [found.ids, pa.array(points[:, 0]), pa.array(points[:, 1])], schema=self.schema
        )

    def summary(self) -> dict[str, int]:
        return {"rows": self.rows}
