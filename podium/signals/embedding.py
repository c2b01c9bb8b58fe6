"""Embeddings: one unit vector per row (its chosen turns joined), stored as a
fixed-size list of float32 in `NS.TABLE__sig_embedding`; the model, its dimensions and
the turns read are the signal's settings (a served model's dimensions learnt from it
before anything is read, its checkpoint's digest or endpoint pinned beside them). Once
the table is committed an approximate index of its vectors is written beside it
(`podium.signals.vector_index`).

A row without any text in its chosen turns gets no vector."""

from __future__ import annotations

from typing import Any, ClassVar

import pyarrow as pa
from pyiceberg.table import Table

from podium.signals.embedders import TextEmbedder, check_embedder, embedder_for
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
    description: ClassVar[str] = (
        "A vector per row (wordllama offline, or a served model), with a vector index."
    )
    schema: ClassVar[pa.Schema] = vector_schema(256)

    def __init__(self, settings: EmbeddingSettings) -> None:
        super().__init__(settings)
        self.schema = vector_schema(settings.dims or 0)  # type: ignore[misc]
        self._embedder: TextEmbedder | None = None
        self._rows = 0
        self._skipped = 0

    def check(self) -> None:
        """wordllama that cannot load, or a model name not registered, fails here (a
        served model's server is the run's: `prepare`)."""
        check_embedder(self.settings)

    def prepare(self) -> None:
        """A served model's server started, and one that makes no embeddings or other
        dimensions than asked refused, before anything is read."""
        embedder = self.embedder()
        if self.settings.dims is None and embedder.dims:
            self.settings = self.settings.model_copy(update={"dims": embedder.dims})
            self.schema = vector_schema(embedder.dims)  # type: ignore[misc]

    def pinned(self) -> dict[str, Any]:
        return dict(getattr(self.embedder(), "pinned", {}))

    def embedder(self) -> TextEmbedder:
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
                pa.FixedSizeListArray.from_arrays(flat, self.settings.dims or 0),
            ],
            schema=self.schema,
        )

    def summary(self) -> dict[str, int]:
        return {"rows": self._rows, "no_text": self._skipped, "dims": self.settings.dims or 0}

    def after_write(self, written: Table) -> None:
        from podium.signals.vector_index import build_index

        build_index(written)
