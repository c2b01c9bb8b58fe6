"""Settings of the map's signals (embedding, topics, projection): pydantic only, so the
CLI builds its options without loading an embedding model or scikit-learn."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from podium.errors import InvalidInput
from podium.signals.settings import SignalSettings

# The offline default: wordllama's l2_supercat, whose 256-dimension weights ship inside
# its wheel (smaller dimensions are its matryoshka truncations).
DEFAULT_EMBEDDER = "wordllama"
WORDLLAMA_DIMS = (64, 128, 256)


class EmbeddingSettings(SignalSettings):
    model: str = Field(
        DEFAULT_EMBEDDER,
        description="The embedding model: wordllama (offline on CPU, weights inside its package).",
    )
    dims: int = Field(256, description="Vector dimensions: 64, 128 or 256 (wordllama).")
    max_chars: int = Field(
        4000,
        ge=16,
        le=1_000_000,
        description="Characters of each row embedded (first turns first).",
    )

    @field_validator("model")
    @classmethod
    def _embedding_model(cls, model: str) -> str:
        model = model.strip()
        if model != DEFAULT_EMBEDDER:
            raise InvalidInput(
                f"{model!r} is not an embedding model Podium can run; use {DEFAULT_EMBEDDER!r} "
                "(offline, on CPU). Chat checkpoints do not make embeddings."
            )
        return model

    @field_validator("dims")
    @classmethod
    def _known_dims(cls, dims: int) -> int:
        if dims not in WORDLLAMA_DIMS:
            raise InvalidInput(
                f"embedding.dims={dims} is not one wordllama makes; use one of "
                f"{', '.join(map(str, WORDLLAMA_DIMS))}."
            )
        return dims


class TopicsSettings(SignalSettings):
    categories: int = Field(8, ge=1, le=1000, description="Top-level topics (categories).")
    clusters: int = Field(
        32, ge=1, le=100_000, description="Topics (clusters); each belongs to one category."
    )
    fit_rows: int = Field(
        200_000, ge=100, description="Rows k-means is fitted on (a sample; all rows get a topic)."
    )
    seed: int = Field(0, description="Seed of the sample and of k-means.")


class ProjectionSettings(SignalSettings):
    method: Literal["pca"] = Field("pca", description="How vectors become 2-D points.")
    fit_rows: int = Field(200_000, ge=100, description="Rows the projection is fitted on.")
    seed: int = Field(0, description="Seed of the sample.")


class SemanticDupSettings(SignalSettings):
    threshold: float = Field(
        0.95,
        gt=0,
        le=1,
        description="Cosine of two rows' embeddings that makes them duplicates.",
    )
    neighbours: int = Field(
        16, ge=1, le=1000, description="Nearest rows (by the vector index) checked per row."
    )
