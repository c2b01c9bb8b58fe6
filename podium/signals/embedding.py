"""Embeddings: one unit vector per row (its chosen turns joined), stored as a
fixed-size list of float32 in `NS.TABLE__sig_embedding`; the model, its dimensions and
the turns read are the signal's settings. Once the table is committed an approximate
index of its vectors is written beside it (`podium.signals.vector_index`).

A row without any text in its chosen turns gets no vector."""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa
from pyiceberg.table import Table

from podium.signals.embedders import Embedder, embedder_for
from podium.signals.map_settings import EmbeddingSettings
from podium.signals.signal import RowSignal
from podium.signals.turns import Turns


def vector_schema(dims: int) -> pa.Schema:
    return pa.schema(
        [pa.field("id", pa.string()), pa.field("vector", pa.list_(pa.float32(), dims))]
    )


class Embedding(RowSignal[EmbeddingSettings]):
    name: ClassVar[str] = "embedding"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "A vector per row (wordllama offline), with a vector index."
    schema: ClassVar[pa.Schema] = vector_schema(256)

    def __init__(self, settings: EmbeddingSettings) -> None:
        super().__init__(settings)
        self.schema = vector_schema(settings.dims)  # type: ignore[misc]
        self._embedder: Embedder | None = None
        self._rows = 0
        self._skipped = 0

    def check(self) -> None:
        self.embedder()  # a model that cannot load fails before anything is read

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = embedder_for(self.settings)
        return self._embedder

    def compute(self, turns: Turns) -> pa.RecordBatch:
        texts = turns.row_texts()
        keep = [i for i, t in enumerate(texts) if t.strip()]
        self._skipped += len(texts) - len(keep)
        vectors = self.embedder().embed([texts[i] for i in keep])
        self._rows += len(keep)
        flat = pa.array(vectors.reshape(-1), pa.float32())
        return pa.RecordBatch.from_arrays(
            [
                pa.array([turns.ids[i] for i in keep], pa.string()),
                pa.FixedSizeListArray.from_arrays(flat, self.settings.dims),
            ],
            schema=self.schema,
        )

    def summary(self) -> dict[str, int]:
        return {"rows": self._rows, "no_text": self._skipped, "dims": self.settings.dims}

    def after_write(self, written: Table) -> None:
        from podium.signals.vector_index import build_index

        build_index(written)
